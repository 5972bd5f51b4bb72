"""The ``{{ gpu_check FILE }}`` directive of the results pages: one JSON written by ``benchmarks/gpu_check.py`` as
tables (the machine, training steps with each setting's speed against float32 eager of the same preset in the same
run, the CPU/device agreement, the one-GPU DDP run and serve's throughput); and ``{{ decode_compile FILE }}``: one JSON
of ``benchmarks/decode_compile.py`` (greedy and beam decoding, eager against compiled fixed-shape steps).

Both take ``FILE [FILE ...] [PART ...]``: further files are named beside the first, and parts pick what to show
(default: everything of one file). ``gpu_check`` parts: ``machine``, ``steps``, ``best`` (one row per preset: its
fastest setting), ``settings`` (one small table per preset: a row per setting), ``agreement``, ``ddp``, ``train``,
``serve``, ``forcing`` (the goal-tree step per teacher forcing, against node-by-node forcing in float32) and
``mfu`` (the TP-Transformer's model FLOPs utilisation at the paper's size), and ``ab`` (a JSON of
``benchmarks/tree_step_ab.py``: the goal-tree step of three code bases, round by round); with several files a preset's
rows come from the last file that timed it. ``decode_compile`` parts:
``summary`` (compiled against eager) and ``times`` (the medians)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from neuromath.errors import NeuromathError
from neuromath.safe_read import load_json, read_data_text

BASELINE = "32-true"
GPU_PARTS = ("machine", "steps", "best", "settings", "agreement", "ddp", "train", "serve", "forcing", "mfu", "ab")
AB_SIDES = ("base", "packed", "new")  # the sides of benchmarks/tree_step_ab.py
FORCING_BASE = "nodes 32-true"
DECODE_PARTS = ("summary", "times")


def _files_and_parts(path: Path, known: tuple[str, ...], where: str) -> tuple[list[Path], list[str]]:
    """``results/A.json B.json best`` -> ([results/A.json, results/B.json], ["best"])."""
    first, *words = str(path).split(" ")
    files, parts = [Path(first)], []
    for word in filter(None, words):
        if word.endswith(".json"):
            files.append(Path(first).parent / word)
        elif word in known:
            parts.append(word)
        else:
            raise NeuromathError(f"{where}: unknown part {word!r} (known: {', '.join(known)})")
    return files, parts


def _setting_cell(result: dict) -> str:
    if "error" in result:
        return f"error: {result['error'].split(':')[0]}"
    if "skipped" in result:  # past the check's time budget, or a model train.compile does not apply to
        return "skipped (time budget)" if "budget" in result["skipped"] else "n/a (train.compile: sequence models)"
    return f"{result['median_ms']:.1f} ms"


def _fastest(results: dict) -> tuple[str, str, str] | None:
    """(setting, throughput, speed-up against float32 eager) of the fastest timed setting, or None."""
    timed = {name: result for name, result in results.items() if "median_ms" in result}
    if not timed:
        return None
    fastest = min(timed, key=lambda name: timed[name]["median_ms"])
    rate = f"{timed[fastest]['per_second']:,.0f} {timed[fastest]['unit']}"
    base = timed.get(BASELINE)
    return fastest, rate, f"{base['median_ms'] / timed[fastest]['median_ms']:.2f}×" if base else "n/a"


def steps_table(steps: dict) -> str:
    """preset × setting: the median step, the throughput and the speed-up against float32 eager of the preset."""
    settings = list(dict.fromkeys(name for results in steps.values() for name in results))
    header = ["preset", *settings, "unit per second (fastest)", "best / float32 eager"]
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for preset, results in steps.items():
        cells = [_setting_cell(results[name]) if name in results else "not reached" for name in settings]
        fastest = _fastest(results)
        rate, speedup = (f"{fastest[1]} ({fastest[0]})", fastest[2]) if fastest else ("n/a", "n/a")
        lines.append("| " + " | ".join([f"`{preset}`", *cells, rate, speedup]) + " |")
    return "\n".join(lines)


def best_table(steps: dict) -> str:
    """One row per preset: its fastest setting, that median step, its throughput and its speed-up."""
    lines = ["| preset | fastest setting | median step | per second | vs float32 eager |",
             "| --- | --- | ---: | ---: | ---: |"]
    for preset, results in steps.items():
        fastest = _fastest(results)
        if fastest is None:
            error = next(iter(results.values()), {})
            lines.append(f"| `{preset}` | {_setting_cell(error) if error else 'n/a'} | n/a | n/a | n/a |")
        else:
            lines.append(f"| `{preset}` | {fastest[0]} | {results[fastest[0]]['median_ms']:.1f} ms | {fastest[1]} | "
                         f"{fastest[2]} |")
    return "\n".join(lines)


def settings_tables(steps: dict) -> str:
    """A table per preset: each setting's median step, throughput and speed-up against float32 eager."""
    blocks = []
    for preset, results in steps.items():
        base = results.get(BASELINE, {}).get("median_ms")
        lines = [f"`{preset}`:", "", "| setting | median step | per second | vs float32 eager |",
                 "| --- | ---: | ---: | ---: |"]
        for name, result in results.items():
            if "median_ms" in result:
                ratio = f"{base / result['median_ms']:.2f}×" if base else "n/a"
                lines.append(f"| {name} | {result['median_ms']:.1f} ms | {result['per_second']:,.0f} "
                             f"{result['unit']} | {ratio} |")
            else:
                lines.append(f"| {name} | {_setting_cell(result)} | | |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def forcing_table(forcing: dict) -> str:
    """preset x setting of the tree_forcing section: each median step and its speed-up over node-by-node forcing in
    float32 of the same preset in the same run; the encoder alone last."""
    lines = ["| preset | setting | median step | per second | vs nodes float32 |", "| --- | --- | ---: | ---: | ---: |"]
    for preset, results in forcing.items():
        base = results.get(FORCING_BASE, {}).get("median_ms")
        for name, result in results.items():
            if "median_ms" not in result:
                lines.append(f"| `{preset}` | {name} | {_setting_cell(result)} | | |")
                continue
            if "per_second" not in result:  # the encoder alone: a floor, not a setting to compare
                lines.append(f"| `{preset}` | {name} | {result['median_ms']:.1f} ms | | |")
                continue
            rate = f"{result['per_second']:,.0f} {result['unit']}"
            ratio = f"{base / result['median_ms']:.2f}×" if base else "n/a"
            lines.append(f"| `{preset}` | {name} | {result['median_ms']:.1f} ms | {rate} | {ratio} |")
    return "\n".join(lines)


def ab_table(ab: dict) -> str:
    """The rounds of ``benchmarks/tree_step_ab.py``: per measurement, each side's median over its rounds (and their
    range), and the speed-ups of today's code (``new``) over the others, computed here from the rounds."""
    names = list(dict.fromkeys(name for entry in ab.get("rounds", []) for name in entry["results"]))
    lines = ["| measurement | base | packed GRU | new | base / new | packed / new |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in names:
        found = {side: [entry["results"][name] for entry in ab["rounds"] if entry["side"] == side and
                        name in entry["results"]] for side in AB_SIDES}
        medians = {side: statistics.median(values) for side, values in found.items() if values}
        cells = [f"{medians[side]:.1f} ms ({min(found[side]):.1f}-{max(found[side]):.1f})" if side in medians else ""
                 for side in AB_SIDES]
        ratios = [f"{medians[side] / medians['new']:.2f}×" if side in medians and "new" in medians else "n/a"
                  for side in ("base", "packed")]
        lines.append(f"| {name} | {' | '.join(cells)} | {' | '.join(ratios)} |")
    return "\n".join(lines)


def mfu_line(mfu: dict) -> str:
    """The mfu section as one table row: batch, precision, step, FLOPs, achieved and peak TFLOPS, utilisation."""
    if "error" in mfu or "skipped" in mfu:
        return f"MFU: {mfu.get('error') or mfu.get('skipped')}"
    compiled = "compiled" if mfu.get("compiled") else "eager"
    utilisation = f"{100 * mfu['mfu']:.1f} %" if mfu.get("mfu") is not None else "n/a (unknown peak)"
    return "\n".join([
        "| preset | batch | setting | median step | FLOPs per step | achieved | peak | MFU |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
        f"| `{mfu['preset']}` | {mfu['batch']} | {mfu['precision']} {compiled} | {mfu['median_ms']:.1f} ms | "
        f"{mfu['flops_per_step'] / 1e12:.1f} T | {mfu['achieved_tflops']:.0f} TFLOPS | {mfu['peak_tflops']} TFLOPS | "
        f"{utilisation} |"])


def _read_gpu_check(path: Path, where: str) -> dict:
    try:
        return load_json(read_data_text(path), path)  # a FIFO or too deep: refused
    except (OSError, json.JSONDecodeError) as error:
        raise NeuromathError(f"{where}: cannot read the GPU check {path}: {error}") from error


def _merged(reports: list[dict], section: str) -> dict:
    """preset -> result of a section over several reports: the last report that has a result without an error."""
    merged: dict = {}
    for report in reports:
        part = report.get(section, {})
        if not isinstance(part, dict) or "traceback" in part:  # the whole section failed: nothing per preset
            continue
        for preset, result in part.items():
            failed = "error" in result or (section == "steps" and _fastest(result) is None)
            if preset not in merged or not failed:
                merged[preset] = result
    return merged


def render_gpu_check(path: Path, where: str) -> str:
    files, parts = _files_and_parts(path, GPU_PARTS, where)
    reports = [_read_gpu_check(file, where) for file in files]
    report, show = reports[-1], set(parts or GPU_PARTS) - ({"best", "settings"} if not parts else set())
    lines = []
    if "machine" in show:
        env, settings = reports[0].get("environment", {}), reports[0].get("settings", {})
        lines += [f"**{files[0].name}**: {env.get('gpu', env.get('device'))}, torch {env.get('torch')}, CUDA "
                  f"{env.get('cuda')}, Python {env.get('python')}; {settings.get('steps')} timed steps of batch "
                  f"{settings.get('batch')} per setting; {reports[0].get('seconds')} s written.", ""]
    steps = _merged(reports, "steps")
    if steps and "steps" in show:
        lines += ["Training steps (median; forward, loss, backward, Adam):", "", steps_table(steps), ""]
    if steps and "best" in show:
        lines += [best_table(steps), ""]
    if steps and "settings" in show:
        lines += [settings_tables(steps), ""]
    agreement = _merged(reports, "agreement")
    if agreement and "agreement" in show:
        lines += ["| preset | CPU vs device, largest logit difference | largest logit |", "| --- | ---: | ---: |"]
        for preset, result in agreement.items():
            if "error" in result:
                lines.append(f"| `{preset}` | error: {result['error'].split(':')[0]} | |")
            else:
                lines.append(f"| `{preset}` | {result['max_abs_difference']:.2e} | {result['max_abs_logit']:.3g} |")
        lines.append("")
    ddp = report.get("ddp")
    if isinstance(ddp, dict) and "returncode" in ddp and "ddp" in show:
        lines += [f"One-GPU DDP through `neuromath train`: return code {ddp['returncode']}, {ddp.get('steps')} steps "
                  f"in {ddp['seconds']} s (start-up included).", ""]
    trained = report.get("train_compiled")
    if isinstance(trained, dict) and "eager" in trained and "train" in show:
        lines += ["| `neuromath train`, word-problem Transformer | return code | seconds | last validation loss |",
                  "| --- | ---: | ---: | ---: |"]
        for name, label in (("eager", "float32 eager"), ("compiled", "bf16, compiled with CUDA graphs")):
            result = trained.get(name, {})
            loss = result.get("last_val_loss")
            lines.append(f"| {label} | {result.get('returncode')} | {result.get('seconds')} | "
                         f"{'n/a' if loss is None else f'{loss:.4f}'} |")
        lines.append("")
    serve = report.get("serve")
    if isinstance(serve, dict) and "batch_1" in serve and "serve" in show:
        rates = ", ".join(f"{result['problems_per_second']} problems/s in batches of {name.split('_')[1]}"
                          for name, result in serve.items())
        lines += [f"`Solver.solve_many` (untrained word-problem Transformer, greedy to the length limit): {rates}.", ""]
    forcing = _merged(reports, "tree_forcing")
    if forcing and "forcing" in show:
        lines += [forcing_table(forcing), ""]
    ab = report.get("tree_ab")
    if isinstance(ab, dict) and ab.get("rounds") and "ab" in show:
        rounds = max(entry["round"] for entry in ab["rounds"])
        lines += [f"Medians over {rounds} rounds, each side in its own process, the sides taking turns; the range in "
                  "brackets.", "", ab_table(ab), ""]
    mfu = report.get("mfu")
    if isinstance(mfu, dict) and mfu and "mfu" in show:
        lines += [mfu_line(mfu), ""]
    return "\n".join(lines).rstrip("\n")


def render_decode_compile(path: Path, where: str) -> str:
    """A ``benchmarks/decode_compile.py`` JSON as two tables: per model and precision, the compiled decoder's speed-up
    over eager decoding, its agreement with it and dynamo's counts; then the median greedy and beam searches of each
    decoder and beam / greedy."""
    files, parts = _files_and_parts(path, DECODE_PARTS, where)
    path, show = files[0], set(parts or DECODE_PARTS)
    try:
        report = load_json(read_data_text(path), path)
        env, rows = report["environment"], report["rows"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise NeuromathError(f"{where}: cannot read the decoding benchmark {path}: {error}") from error
    machine = env.get("gpu") or f"CPU, {env.get('threads')} threads"
    lines = [f"**{path.name}**: {machine}, torch {env.get('torch')}; {env.get('sources')} sources, "
             f"{env.get('steps')} steps (eos masked), beam {env.get('beam')}, medians of {env.get('repeats')}."]
    if "summary" in show:
        lines += ["", "| model | precision | compiled vs eager: greedy, beam | best hypotheses = eager | "
                  "graphs, breaks |", "| --- | --- | ---: | ---: | ---: |"]
        for row in rows:
            equal = min(value for key, value in row["best_equal_to_eager"].items() if key.startswith("compiled"))
            lines.append(f"| {row['attention']} | {row['precision']} | {row['compiled_speedup']['greedy']:.2f}×, "
                         f"{row['compiled_speedup']['beam']:.2f}× | {equal} of {row['sources']} | "
                         f"{row['dynamo']['unique_graphs']}, {row['dynamo']['graph_breaks']} |")
    if "times" in show:
        lines += ["", "| model | precision | greedy ms: eager / fixed / compiled | beam ms: eager / fixed / compiled | "
                  "beam / greedy: eager, compiled |", "| --- | --- | ---: | ---: | ---: |"]
        for row in rows:
            median = row["median_s"]
            times = {what: " / ".join(f"{1000 * median[f'{name}/{what}']:.1f}"
                                      for name in ("eager", "fixed", "compiled")) for what in ("greedy", "beam")}
            lines.append(f"| {row['attention']} | {row['precision']} | {times['greedy']} | {times['beam']} | "
                         f"{row['beam_over_greedy']['eager']:.2f}, {row['beam_over_greedy']['compiled']:.2f} |")
    return "\n".join(lines)
