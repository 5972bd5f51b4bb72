"""neuromath/tasks/word_problems.py readers on the shared real data sets (../shared/data, see its README).

Every record either becomes an Example or is a known, counted case. Known unreadable records:
- MAWPS.json: 13 equations that are not linear in x (rational or quadratic, e.g. the wind-speed
  problems ``560.0/(60.0-x)=640.0/(60.0+x)``) and record 603, whose equation ``X=0.32=0.21`` is a typo;
- Math23K testset.json: record 10431, whose equation ``x=80千米/小时`` holds units.
Gold answers that disagree with their equation (beyond a relative 1e-4) are counted per data set:
they are errors or roundings in the data (MAWPS "0.3333" for 1/3, "James has 1222 balloons ...
how many more than Amy's 513?" with answer 208, ...). In the 5-fold CSV copies each problem
appears in all five folds, so MAWPS's 13 mismatching problems count 65 times.
"""

import re

import pytest

from neuromath.dataroot import data_root
from neuromath.tasks.word_problems import detect_format, is_correct, read_examples

DATA = data_root()  # the benchmark corpora ($NEUROMATH_DATA; tests/conftest.py points it at ../shared/data)

NOT_LINEAR_IN_X = {"69", "497", "1017", "1023", "1124", "1350", "1466", "1921", "1986", "1990", "2276", "2290", "2360"}

# name: (files, records read, {skipped id: reason fragment}, gold answers that disagree with the equation)
DATA_SETS = {
    "mawps-cv": ("mawps-cv/fold*/*.csv", 9605, {}, 65),
    "asdiv-a-cv": ("asdiv-a-cv/fold*/*.csv", 6085, {}, 0),
    "mawps-json": (
        "mawps-json/MAWPS.json",
        2359,
        {**{id: "not linear in it" for id in NOT_LINEAR_IN_X}, "603": "more than one '='"},
        36,
    ),
    "math23k-valid": ("math23k/validset.json", 2316, {}, 0),
    "math23k-test": ("math23k/testset.json", 2316, {"10431": "cannot parse '80千米/小时'"}, 0),
}


@pytest.fixture(scope="module", params=sorted(DATA_SETS))
def data_set(request):
    if not DATA.is_dir():
        pytest.skip(f"the benchmark data is not under the data root {DATA}")
    pattern, *expected = DATA_SETS[request.param]
    files = sorted(DATA.glob(pattern))
    assert files, f"no files match {pattern} in {DATA}"
    examples, skipped = [], []
    for path in files:
        examples += read_examples(path, lenient=True, skipped=skipped)
    return request.param, files, examples, skipped, expected


def test_every_record_is_read_or_a_known_case(data_set):
    name, files, examples, skipped, (n_read, known_skips, _) = data_set
    print(f"{name}: {len(files)} file(s), {len(examples)} examples read, {len(skipped)} skipped")
    for error in skipped:
        print(f"  skipped {error}")
    assert len(examples) == n_read
    skipped_reasons = {re.match(r"record (\S+): ", error.reason)[1]: error.reason for error in skipped}
    assert len(skipped_reasons) == len(skipped)
    assert set(skipped_reasons) == set(known_skips)
    for record_id, fragment in known_skips.items():
        assert fragment in skipped_reasons[record_id]


def test_each_equation_gives_the_gold_answer_except_known_data_errors(data_set):
    name, _, examples, _, (_, _, n_mismatches) = data_set
    mismatches = [example for example in examples if not is_correct(example.equation, example)]
    print(f"{name}: {len(mismatches)} gold answers differ from their equation's value")
    assert len(mismatches) == n_mismatches


def test_every_equation_uses_masked_numbers_but_one_known_problem(data_set):
    name, _, examples, _, _ = data_set
    without_numbers = [example for example in examples if not any(re.fullmatch(r"n\d+", t) for t in example.equation)]
    # "Nancy has saved 1 dozen quarters ..." is 12 * 0.25: only constants (once per fold in the CSV copies).
    assert len(without_numbers) == {"mawps-cv": 5, "mawps-json": 1}.get(name, 0)
    assert all(example.equation == ("*", "12", "0.25") for example in without_numbers)


def test_detect_format_recognises_each_data_set(data_set):
    name, files, _, _, _ = data_set
    expected = "svamp_csv" if name.endswith("-cv") else "mwptoolkit_json"
    assert {detect_format(path) for path in files} == {expected}
