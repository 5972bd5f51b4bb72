"""DeepMind's generator on Python 3.12+: its modules get (on every Python) a ``random`` that takes integral floats in
``randint`` and ``randrange`` as Python 3.10 and 3.11 did (``numbers__round_number`` passes ``-10 ** k / 2``), with
the same draws."""

import random

import pytest

from neuromath.tasks.mathematics_dataset.mathematics_generator import RandomWithIntegralFloats


def test_integral_floats_draw_what_the_ints_draw():
    proxy = RandomWithIntegralFloats("random")
    random.seed(7)
    expected = [random.randint(-50, 49) for _ in range(40)] + [random.randrange(0, 100, 5) for _ in range(40)]
    random.seed(7)
    drawn = [proxy.randint(-50.0, 49.0) for _ in range(40)] + [proxy.randrange(0.0, 100.0, 5.0) for _ in range(40)]
    assert drawn == expected and all(type(value) is int for value in drawn)
    assert proxy.choice is random.choice and proxy.uniform is random.uniform  # every other name is random's own


@pytest.mark.parametrize("call", [lambda r: r.randint(0.5, 3), lambda r: r.randrange(10, 2.5)])
def test_a_non_integral_float_is_refused_as_python_3_11_refused_it(call):
    with pytest.raises(ValueError, match="non-integer argument"):
        call(RandomWithIntegralFloats("random"))


def test_rounding_questions_are_generated():
    pytest.importorskip("mathematics_dataset")
    from neuromath.tasks.mathematics_dataset.mathematics_generator import prepare_mathematics_dataset, sample_module

    prepare_mathematics_dataset()
    numbers = pytest.importorskip("mathematics_dataset.modules.numbers")
    assert isinstance(numbers.random, RandomWithIntegralFloats)  # on every Python: this draws through the fix
    first = sample_module("train-easy", "numbers__round_number", 5, 0).pairs
    assert len(first) == 5 and all("ound" in question for question, _ in first)
    assert sample_module("train-easy", "numbers__round_number", 5, 0).pairs == first
