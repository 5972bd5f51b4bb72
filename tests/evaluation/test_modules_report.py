"""Per-module Mathematics Dataset report: Table-1 summary, Markdown, CSV, plot and files."""

import csv
import io
import json
import random
import struct
import sys

import pytest

from neuromath.evaluation.modules_report import build_report, plot, to_csv, to_markdown, write_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def make_records(split, module, n, correct):
    """``n`` records of one module of which the first ``correct`` are right."""
    return [{"split": split, "module": module, "correct": index < correct, "question": f"q{index}"}
            for index in range(n)]


def shuffled(records, seed):
    records = list(records)
    random.Random(seed).shuffle(records)
    return records


# tp:   interpolate linear_1d 19/20 (exactly 0.95), add_or_sub 4/4, gcd 0/1 (only tp);
#       extrapolate add_or_sub_big 3/10.
# base: interpolate linear_1d 10/20, add_or_sub 1/4;
#       extrapolate add_or_sub_big 6/10, polynomial_roots_big 20/20 (only base).
TP_RECORDS = shuffled(
    make_records("interpolate", "algebra__linear_1d", 20, 19)
    + make_records("interpolate", "arithmetic__add_or_sub", 4, 4)
    + make_records("interpolate", "numbers__gcd", 1, 0)
    + make_records("extrapolate", "arithmetic__add_or_sub_big", 10, 3),
    seed=1,
)
BASE_RECORDS = shuffled(
    make_records("extrapolate", "arithmetic__add_or_sub_big", 10, 6)
    + make_records("interpolate", "algebra__linear_1d", 20, 10)
    + make_records("extrapolate", "algebra__polynomial_roots_big", 20, 20)
    + make_records("interpolate", "arithmetic__add_or_sub", 4, 1),
    seed=2,
)
META = {"tp": {"parameters": 1234567, "steps": 5000}, "base": {"parameters": 1000}}


@pytest.fixture
def report():
    return build_report({"tp": TP_RECORDS, "base": BASE_RECORDS}, META)


def table_rows(markdown, first_header_cell):
    """The rows (lists of cells) of the Markdown table whose header starts with ``first_header_cell``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header_cell} |"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = line.strip()[1:-1].replace("\\|", "\0").split("|")  # an escaped pipe is not a cell border
        table.append([cell.strip().replace("\0", "|") for cell in cells])
    return table


def test_modules_are_sorted_and_counted_per_run(report):
    assert report["runs"] == ["tp", "base"]
    keys = [(row["split"], row["module"]) for row in report["modules"]]
    assert keys == [
        ("interpolate", "algebra__linear_1d"),
        ("interpolate", "arithmetic__add_or_sub"),
        ("interpolate", "numbers__gcd"),
        ("extrapolate", "algebra__polynomial_roots_big"),
        ("extrapolate", "arithmetic__add_or_sub_big"),
    ]
    linear = report["modules"][0]
    assert linear["n"] == {"tp": 20, "base": 20}
    assert linear["correct"] == {"tp": 19, "base": 10}
    assert linear["accuracy"] == {"tp": pytest.approx(0.95), "base": pytest.approx(0.5)}
    gcd = report["modules"][2]
    assert gcd["n"] == {"tp": 1, "base": 0} and gcd["accuracy"] == {"tp": 0.0, "base": None}
    roots = report["modules"][3]
    assert roots["n"] == {"tp": 0, "base": 20} and roots["accuracy"] == {"tp": None, "base": 1.0}


def test_summary_mean_is_over_modules_not_pooled(report):
    tp = report["summary"]["tp"]
    assert tp["meta"] == {"parameters": 1234567, "steps": 5000}
    # unweighted: (0.95 + 1.0 + 0.0) / 3 = 0.65; pooled: 23 / 25 = 0.92
    assert tp["interpolate"]["mean_accuracy"] == pytest.approx(0.65)
    assert tp["interpolate"]["overall_accuracy"] == pytest.approx(0.92)
    assert (tp["interpolate"]["correct"], tp["interpolate"]["n"], tp["interpolate"]["modules"]) == (23, 25, 3)
    # 0.95 exactly is not above 95%; only add_or_sub (1.0) counts
    assert tp["interpolate"]["above_95"] == 1
    assert tp["extrapolate"] == {"mean_accuracy": pytest.approx(0.3), "modules": 1, "above_95": 0,
                                 "correct": 3, "n": 10, "overall_accuracy": pytest.approx(0.3)}

    base = report["summary"]["base"]
    assert base["meta"] == {"parameters": 1000}
    # gcd is missing for base and does not enter its mean: (0.5 + 0.25) / 2
    assert base["interpolate"]["mean_accuracy"] == pytest.approx(0.375)
    assert base["interpolate"]["overall_accuracy"] == pytest.approx(11 / 24)
    assert base["interpolate"]["modules"] == 2 and base["interpolate"]["above_95"] == 0
    # (0.6 + 1.0) / 2 = 0.8 against pooled 26 / 30
    assert base["extrapolate"]["mean_accuracy"] == pytest.approx(0.8)
    assert base["extrapolate"]["overall_accuracy"] == pytest.approx(26 / 30)
    assert base["extrapolate"]["above_95"] == 1 and base["extrapolate"]["modules"] == 2


def test_summary_matches_a_direct_loop_on_random_records():
    rng = random.Random(7)
    modules = [f"module_{index}" for index in range(6)]
    records = [{"split": rng.choice(["interpolate", "extrapolate"]), "module": rng.choice(modules),
                "correct": rng.random() < 0.7} for _ in range(400)]
    report = build_report({"only": records})
    for split in ("interpolate", "extrapolate"):
        accuracies = []
        for module in modules:
            outcomes = [r["correct"] for r in records if r["split"] == split and r["module"] == module]
            if outcomes:
                accuracies.append(sum(outcomes) / len(outcomes))
        facts = report["summary"]["only"][split]
        assert facts["mean_accuracy"] == pytest.approx(sum(accuracies) / len(accuracies))
        assert facts["modules"] == len(accuracies)
        pooled = [r["correct"] for r in records if r["split"] == split]
        assert facts["overall_accuracy"] == pytest.approx(sum(pooled) / len(pooled))


def test_other_splits_come_after_interpolate_and_extrapolate_alphabetically():
    records = [{"split": split, "module": "m", "correct": True}
               for split in ("zeta", "extrapolate", "alpha", "interpolate")]
    report = build_report({"run": records})
    assert [row["split"] for row in report["modules"]] == ["interpolate", "extrapolate", "alpha", "zeta"]


def test_a_split_one_run_lacks_has_empty_summary():
    report = build_report({
        "a": make_records("interpolate", "m", 2, 1) + make_records("extrapolate", "m_big", 2, 2),
        "b": make_records("interpolate", "m", 2, 2),
    })
    assert report["summary"]["b"]["extrapolate"] == {"mean_accuracy": None, "modules": 0, "above_95": 0,
                                                     "correct": 0, "n": 0, "overall_accuracy": None}
    summary = table_rows(to_markdown(report), "run")
    assert summary[3] == ["b", "100.0", "1 / 1", "n/a", "n/a"]


def test_report_is_json_ready(report):
    assert json.loads(json.dumps(report)) == report


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"split": "interpolate", "correct": True}, "module"),
        ({"module": "m", "correct": True}, "split"),
        ({"split": "interpolate", "module": "m"}, "correct"),
        ({"split": "interpolate", "module": "m", "correct": "yes"}, "correct"),
        ({"split": "", "module": "m", "correct": True}, "split"),
        ("not a record", "dict"),
    ],
)
def test_a_bad_record_names_run_and_index(record, reason):
    records = make_records("interpolate", "m", 2, 1) + [record]
    with pytest.raises(ValueError, match=rf"'base', record 2: .*{reason}"):
        build_report({"tp": make_records("interpolate", "m", 3, 3), "base": records})


def test_meta_for_an_unknown_run_is_an_error():
    with pytest.raises(ValueError, match="ghost"):
        build_report({"tp": TP_RECORDS}, {"ghost": {"steps": 1}})


def test_markdown_summary_table(report):
    markdown = to_markdown(report)
    summary = table_rows(markdown, "run")
    assert summary[0] == ["run", "parameters", "steps",
                          "interpolate mean accuracy (%)", "interpolate modules > 95%",
                          "extrapolate mean accuracy (%)", "extrapolate modules > 95%"]
    assert summary[1] == ["---", "---:", "---:", "---:", "---:", "---:", "---:"]
    assert summary[2] == ["tp", "1,234,567", "5,000", "65.0", "1 / 3", "30.0", "0 / 1"]
    assert summary[3] == ["base", "1,000", "", "37.5", "0 / 2", "80.0", "1 / 2"]


def test_markdown_module_table_with_signed_difference(report):
    modules = table_rows(to_markdown(report), "split")
    assert modules[0] == ["split", "module", "n", "tp", "base", "difference (tp - base, points)"]
    assert modules[1] == ["---", "---", "---:", "---:", "---:", "---:"]
    assert modules[2:] == [
        ["interpolate", "algebra__linear_1d", "20", "95.0", "50.0", "+45.0"],
        ["interpolate", "arithmetic__add_or_sub", "4", "100.0", "25.0", "+75.0"],
        ["interpolate", "numbers__gcd", "1", "0.0", "n/a", "n/a"],
        ["extrapolate", "algebra__polynomial_roots_big", "20", "n/a", "100.0", "n/a"],
        ["extrapolate", "arithmetic__add_or_sub_big", "10", "30.0", "60.0", "-30.0"],
    ]


def test_markdown_tables_are_well_formed_with_odd_run_names():
    report = build_report({"a|b": make_records("interpolate", "m", 3, 1),
                           "c": make_records("interpolate", "m", 3, 2),
                           "d": make_records("interpolate", "m", 3, 3)})
    markdown = to_markdown(report)
    for first in ("run", "split"):
        table = table_rows(markdown, first)
        assert len({len(row) for row in table}) == 1
    modules = table_rows(markdown, "split")
    # three runs: no difference column
    assert modules[0] == ["split", "module", "n", "a|b", "c", "d"]
    assert modules[2] == ["interpolate", "m", "3", "33.3", "66.7", "100.0"]


def test_csv_parses_back(report):
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert [(row["split"], row["module"]) for row in rows] == [
        (row["split"], row["module"]) for row in report["modules"]]
    linear = rows[0]
    assert linear["n"] == "20"
    assert (linear["tp_correct"], float(linear["tp_accuracy"])) == ("19", pytest.approx(0.95))
    assert (linear["base_correct"], float(linear["base_accuracy"])) == ("10", pytest.approx(0.5))
    gcd = rows[2]
    assert (gcd["n"], gcd["tp_correct"], gcd["base_correct"], gcd["base_accuracy"]) == ("1", "0", "", "")


def test_csv_with_a_comma_in_a_run_name_and_unequal_counts():
    report = build_report({"tp, v2": make_records("interpolate", "m", 4, 3),
                           "runs/base": make_records("interpolate", "m", 2, 1)})
    reader = csv.DictReader(io.StringIO(to_csv(report)))
    assert reader.fieldnames == ["split", "module", "n", "tp, v2_correct", "tp, v2_accuracy",
                                 "runs/base_correct", "runs/base_accuracy"]
    (row,) = list(reader)
    assert row["n"] == "4 / 2"
    assert (row["tp, v2_correct"], float(row["tp, v2_accuracy"])) == ("3", 0.75)
    assert (row["runs/base_correct"], float(row["runs/base_accuracy"])) == ("1", 0.5)


def png_size(path):
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", data[16:24])  # IHDR comes first
    return width, height


def test_plot_writes_a_png_and_touches_no_pyplot_state(report, tmp_path):
    pyplot_was_loaded = "matplotlib.pyplot" in sys.modules
    figures_before = sys.modules["matplotlib.pyplot"].get_fignums() if pyplot_was_loaded else None
    path = tmp_path / "plots" / "accuracy.png"
    plot(report, path)
    assert path.stat().st_size > 0 and png_size(path)[1] > 0
    if pyplot_was_loaded:
        assert sys.modules["matplotlib.pyplot"].get_fignums() == figures_before
    else:
        assert "matplotlib.pyplot" not in sys.modules
    assert sorted(p.name for p in path.parent.iterdir()) == ["accuracy.png"]


def test_plot_grows_with_the_number_of_modules(tmp_path):
    few = build_report({"a": [{"split": "interpolate", "module": f"m{i}", "correct": True} for i in range(3)]})
    many = build_report({"a": [{"split": "interpolate", "module": f"m{i}", "correct": True} for i in range(40)]})
    plot(few, tmp_path / "few.png")
    plot(many, tmp_path / "many.png")
    assert png_size(tmp_path / "many.png")[1] > 2 * png_size(tmp_path / "few.png")[1]


def test_write_report_creates_the_four_files(report, tmp_path):
    out_dir = tmp_path / "new" / "report"
    paths = write_report(report, out_dir)
    assert paths == {"markdown": out_dir / "report.md", "csv": out_dir / "report.csv",
                     "json": out_dir / "report.json", "plot": out_dir / "accuracy.png"}
    assert sorted(p.name for p in out_dir.iterdir()) == ["accuracy.png", "report.csv", "report.json", "report.md"]
    assert json.loads(paths["json"].read_text(encoding="utf-8")) == report
    assert paths["markdown"].read_text(encoding="utf-8") == to_markdown(report)
    assert paths["csv"].read_text(encoding="utf-8") == to_csv(report)
    assert paths["plot"].read_bytes().startswith(PNG_SIGNATURE)


def test_an_empty_report_still_writes(tmp_path):
    report = build_report({"a": []})
    assert report["modules"] == [] and report["summary"] == {"a": {"meta": {}}}
    paths = write_report(report, tmp_path)
    assert "(no records)" in paths["markdown"].read_text(encoding="utf-8")
    assert paths["plot"].read_bytes().startswith(PNG_SIGNATURE)
