"""The ``{{ gpu_check FILE }}`` directive of the results pages: one JSON written by ``benchmarks/gpu_check.py`` as
tables (the machine, training steps with each setting's speed against float32 eager of the same preset in the same
run, the CPU/device agreement, the one-GPU DDP run and serve's throughput); and ``{{ decode_compile FILE }}``: one JSON
of ``benchmarks/decode_compile.py`` (greedy and beam decoding, eager against compiled fixed-shape steps)."""

from __future__ import annotations

import json
from pathlib import Path

from neuromath.errors import NeuromathError
from neuromath.safe_read import load_json, read_data_text

BASELINE = "32-true"


def _setting_cell(result: dict) -> str:
    if "error" in result:
        return f"error: {result['error'].split(':')[0]}"
    if "skipped" in result:  # past the check's time budget, or a model train.compile does not apply to
        return "skipped (time budget)" if "budget" in result["skipped"] else "n/a (train.compile: sequence models)"
    return f"{result['median_ms']:.1f} ms"


def steps_table(steps: dict) -> str:
    """preset × setting: the median step, the throughput and the speed-up against float32 eager of the preset."""
    settings = list(dict.fromkeys(name for results in steps.values() for name in results))
    header = ["preset", *settings, "unit per second (fastest)", "best / float32 eager"]
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for preset, results in steps.items():
        timed = {name: result for name, result in results.items() if "median_ms" in result}
        cells = [_setting_cell(results[name]) if name in results else "not reached" for name in settings]
        if timed:
            fastest = min(timed, key=lambda name: timed[name]["median_ms"])
            rate = f"{timed[fastest]['per_second']:,.0f} {timed[fastest]['unit']} ({fastest})"
            base = timed.get(BASELINE)
            speedup = f"{base['median_ms'] / timed[fastest]['median_ms']:.2f}×" if base else "n/a"
        else:
            rate, speedup = "n/a", "n/a"
        lines.append("| " + " | ".join([f"`{preset}`", *cells, rate, speedup]) + " |")
    return "\n".join(lines)


def render_gpu_check(path: Path, where: str) -> str:
    try:
        report = load_json(read_data_text(path), path)  # a FIFO or too deep: refused
    except (OSError, json.JSONDecodeError) as error:
        raise NeuromathError(f"{where}: cannot read the GPU check {path}: {error}") from error
    env = report.get("environment", {})
    settings = report.get("settings", {})
    lines = [f"**{path.name}**: {env.get('gpu', env.get('device'))}, torch {env.get('torch')}, CUDA {env.get('cuda')}, "
             f"Python {env.get('python')}; {settings.get('steps')} timed steps of batch {settings.get('batch')} per "
             f"setting; {report.get('seconds')} s written.", ""]
    if "steps" in report:
        lines += ["Training steps (median; forward, loss, backward, Adam):", "", steps_table(report["steps"]), ""]
    if "agreement" in report:
        lines += ["| preset | CPU vs device, largest logit difference | largest logit |", "| --- | ---: | ---: |"]
        for preset, result in report["agreement"].items():
            if "error" in result:
                lines.append(f"| `{preset}` | error: {result['error'].split(':')[0]} | |")
            else:
                lines.append(f"| `{preset}` | {result['max_abs_difference']:.2e} | {result['max_abs_logit']:.3g} |")
        lines.append("")
    ddp = report.get("ddp")
    if isinstance(ddp, dict) and "returncode" in ddp:
        lines += [f"One-GPU DDP through `neuromath train`: return code {ddp['returncode']}, {ddp.get('steps')} steps "
                  f"in {ddp['seconds']} s (start-up included).", ""]
    trained = report.get("train_compiled")
    if isinstance(trained, dict) and "eager" in trained:
        lines += ["| `neuromath train` (word-problem Transformer) | return code | "
                  "seconds, start-up and compiling included | last validation loss |", "| --- | ---: | ---: | ---: |"]
        for name, label in (("eager", "float32 eager"), ("compiled", "bf16, compiled with CUDA graphs")):
            result = trained.get(name, {})
            loss = result.get("last_val_loss")
            lines.append(f"| {label} | {result.get('returncode')} | {result.get('seconds')} | "
                         f"{'n/a' if loss is None else f'{loss:.4f}'} |")
        lines.append("")
    serve = report.get("serve")
    if isinstance(serve, dict) and "batch_1" in serve:
        rates = ", ".join(f"{result['problems_per_second']} problems/s in batches of {name.split('_')[1]}"
                          for name, result in serve.items())
        lines += [f"`Solver.solve_many` (untrained word-problem Transformer, greedy to the length limit): {rates}.", ""]
    return "\n".join(lines).rstrip("\n")



def render_decode_compile(path: Path, where: str) -> str:
    """A ``benchmarks/decode_compile.py`` JSON as a table: per model and precision, the median greedy and beam searches
    of each decoder, beam / greedy, the compiled decoder's speed-up, its agreement with eager decoding and dynamo's
    counts."""
    try:
        report = load_json(read_data_text(path), path)
        env, rows = report["environment"], report["rows"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise NeuromathError(f"{where}: cannot read the decoding benchmark {path}: {error}") from error
    machine = env.get("gpu") or f"CPU, {env.get('threads')} threads"
    lines = [f"**{path.name}**: {machine}, torch {env.get('torch')}; {env.get('sources')} sources, "
             f"{env.get('steps')} steps (eos masked), beam {env.get('beam')}, medians of {env.get('repeats')}.", "",
             "| model | precision | greedy ms: eager / fixed / compiled | beam ms: eager / fixed / compiled | "
             "beam / greedy: eager, compiled | compiled vs eager: greedy, beam | best hypotheses = eager | "
             "graphs, breaks |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        median, agree = row["median_s"], row["best_equal_to_eager"]
        times = {what: " / ".join(f"{1000 * median[f'{name}/{what}']:.1f}" for name in ("eager", "fixed", "compiled"))
                 for what in ("greedy", "beam")}
        equal = min(value for key, value in agree.items() if key.startswith("compiled"))
        lines.append(
            f"| {row['attention']} | {row['precision']} | {times['greedy']} | {times['beam']} | "
            f"{row['beam_over_greedy']['eager']:.2f}, {row['beam_over_greedy']['compiled']:.2f} | "
            f"{row['compiled_speedup']['greedy']:.2f}×, {row['compiled_speedup']['beam']:.2f}× | "
            f"{equal} of {row['sources']} | {row['dynamo']['unique_graphs']}, {row['dynamo']['graph_breaks']} |")
    return "\n".join(lines)
