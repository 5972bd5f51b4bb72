"""``solve --attention``: the maps a solved problem gives are the weights the model used for it (recomputed here
from each layer's inputs, captured by a forward hook), labelled with the problem's tokens and the decoded answer;
the four groups of group attention are named; a model without attention says so; the CLI draws a PNG and puts the
weights in its JSON."""

import json

import numpy as np
import pytest
import torch

from neuromath.api import load
from neuromath.cli import main
from neuromath.config import ModelConfig, load_config, save_config
from neuromath.errors import NeuromathError
from neuromath.evaluation.attention_maps import plot_attention
from neuromath.models import build_task_model
from neuromath.models.batching import collate
from neuromath.nn.attention import StandardAttention
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

TEXT = "Tom has 5 apples. He buys 3 more. How many apples does he have?"
WORDS = ["tom", "has", "apples", ".", "he", "buys", "more", "how", "many", "does", "have", "?"]
TARGET = ["+", "-", "*", "/", "n0", "n1", "1"]
TINY = ["model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1",
        "model.encoder_hidden=8", "model.decoder_hidden=16", "decode.max_len=12"]


def word_problem_run(run_dir, *settings: str):
    """A word-problem run folder with untrained (seeded) weights, as training would leave it."""
    run_dir.mkdir(parents=True)
    name = next((item.split("=", 1)[1] for item in settings if item.startswith("model.name=")), "transformer")
    keys = ModelConfig.member(name).__dataclass_fields__  # the sizes of TINY that the model's class has
    tiny = [item for item in TINY if not item.startswith("model.") or item.split("=", 1)[0][len("model."):] in keys]
    config = load_config(None, ["data.task=word_problems", *tiny, *settings])
    source, target = Vocabulary([*WORDS, "n0", "n1"]), Vocabulary(TARGET)
    save_config(config, run_dir / "config.yaml")
    source.save(run_dir / "source_vocab.json")
    target.save(run_dir / "target_vocab.json")
    torch.manual_seed(0)
    model = build_task_model(config.model, get_task("word_problems"), source, target)
    torch.save(model.state_dict(), run_dir / "model.pt")
    return run_dir


SOURCE_AXIS = ("tom", "has", "n0", "apples", ".", "he", "buys", "n1", "more", ".", "how", "many", "apples", "does",
               "he", "have", "?", "<eos>")


@pytest.mark.parametrize("settings,titles", [
    ((), ["encoder self-attention, layer 1", "decoder self-attention, layer 1", "cross-attention, layer 1"]),
    (("model.attention=tp",), ["encoder self-attention, layer 1", "decoder self-attention, layer 1",
                               "cross-attention, layer 1"]),
    (("model.name=group_attention", "model.n_heads=4", "model.groups=global,quantity,quantity_pair,question"),
     ["group attention", "decoder attention (Luong)"]),
    (("model.name=bilstm_seq2seq",), ["decoder attention (Luong)"]),
    (("model.name=gts",), ["goal attention"]),
    (("model.name=graph2tree", "model.graph_text=true", "model.shared_words=true"), ["goal attention"]),
])
def test_every_map_is_labelled_by_the_problem_and_the_answer_and_its_rows_sum_to_one(tmp_path, settings, titles):
    solver = load(word_problem_run(tmp_path / "run", *settings))
    solution = solver.solve(TEXT, attention=True)
    assert [m.title for m in solution.attention] == titles
    answer = tuple(solution.masked_equation)
    sides = {"source": SOURCE_AXIS, "target_in": ("<bos>", *answer), "target_out": (*answer, "<eos>")}
    for attention_map in solution.attention:
        assert attention_map.weights.shape == (
            len(attention_map.head_labels), len(attention_map.query_tokens), len(attention_map.key_tokens))
        assert attention_map.key_tokens in (sides["source"], sides["target_in"])
        assert attention_map.query_tokens in sides.values()
        np.testing.assert_allclose(attention_map.weights.sum(-1), 1.0, atol=1e-5)
        if attention_map.place == "decoder":  # no decoded token looks ahead
            assert np.all(np.triu(attention_map.weights, k=1) == 0)
    roles = [m.roles is not None for m in solution.attention]
    assert all(roles) == ("model.attention=tp" in settings) and any(roles) == all(roles)
    if "model.name=group_attention" in settings:
        assert solution.attention[0].head_labels == ("global 1", "quantity 1", "quantity_pair 1", "question 1")
        question = [i for i, token in enumerate(SOURCE_AXIS) if i >= 10]  # "how many apples does he have ? <eos>"
        quantity_pair = solution.attention[0].weights[2]
        # a token of the first clause reads the other quantity clause ("he buys n1 more .") and nothing else
        assert quantity_pair[0, 5:10].sum() == pytest.approx(1.0, abs=1e-5)
        assert np.all(quantity_pair[0, question] == 0)
    if "model.name=gts" in settings:
        assert solution.attention[0].query_tokens == sides["target_out"]  # the goal that predicts each token


def test_transformer_maps_equal_the_softmax_of_each_layers_hooked_queries_and_keys(tmp_path):
    solver = load(word_problem_run(tmp_path / "run"), beam=3)
    solution = solver.solve(TEXT, attention=True)
    source_ids = solver.source_vocab.encode(list(SOURCE_AXIS[:-1]), add_eos=True)
    target_ids = solver.target_vocab.encode(list(solution.masked_equation), add_bos=True, add_eos=True)
    captured = []
    handles = [module.register_forward_hook(lambda layer, args, kwargs, out: captured.append((layer, args, kwargs)),
                                            with_kwargs=True)
               for module in solver.model.modules() if isinstance(module, StandardAttention)]
    with torch.no_grad():
        solver.model(collate([(source_ids, target_ids, 0)]))
    for handle in handles:
        handle.remove()
    assert len(captured) == len(solution.attention) == 3
    for (layer, args, kwargs), attention_map in zip(captured, solution.attention):
        queries = layer.split_heads(layer.query(args[0]))  # (1, H, Tq, Dh)
        keys = layer.split_heads(layer.key(args[1]))
        mask = args[2] if len(args) > 2 else kwargs["mask"]
        scores = (queries @ keys.transpose(-2, -1) / layer.head_dim**0.5).masked_fill(~mask, float("-inf"))
        np.testing.assert_allclose(attention_map.weights, torch.softmax(scores, -1)[0].detach().numpy(), atol=1e-6)


def test_a_model_without_attention_says_so(tmp_path):
    solver = load(word_problem_run(tmp_path / "run", "model.name=dns"))
    assert solver.solve(TEXT).attention is None  # not asked: nothing recorded
    with pytest.raises(NeuromathError, match="the dns model of .* has no attention to show"):
        solver.solve(TEXT, attention=True)


def test_the_cli_draws_the_maps_and_puts_the_weights_in_its_json(tmp_path, capsys):
    run = word_problem_run(tmp_path / "run", "model.attention=tp")
    picture = tmp_path / "maps" / "attention.png"
    assert main(["solve", str(run), TEXT, "--attention", str(picture)]) in (0, 1)
    assert "attention of 3 layers drawn in" in capsys.readouterr().out
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000
    main(["solve", str(run), TEXT, "--json", "--attention", str(picture)])
    output = json.loads(capsys.readouterr().out)
    expected = load(run).solve(TEXT, attention=True).attention
    assert [entry["title"] for entry in output["attention"]] == [m.title for m in expected]
    for entry, attention_map in zip(output["attention"], expected):
        assert entry["queries"] == list(attention_map.query_tokens) and entry["heads"] == ["head 1", "head 2"]
        np.testing.assert_allclose(entry["weights"], attention_map.weights, atol=1e-4)


def test_the_plot_handles_layers_with_different_heads_and_long_inputs(tmp_path):
    from neuromath.api import AttentionMap

    long = tuple(str(i % 10) for i in range(150))
    maps = [AttentionMap("encoder", "encoder", ("a", "b"), long, long, np.full((2, 150, 150), 1 / 150)),
            AttentionMap("one head", "cross", ("c",), ("x", " "), long, np.full((1, 2, 150), 1 / 150))]
    path = plot_attention(maps, tmp_path / "maps.png", title="long")
    assert path.read_bytes()[:4] == b"\x89PNG" and not list(tmp_path.glob(".*tmp"))
    with pytest.raises(ValueError, match="no attention maps"):
        plot_attention([], tmp_path / "none.png")


def test_solve_json_is_strict_json_with_null_for_a_non_finite_weight(tmp_path, capsys, monkeypatch):
    from neuromath.api import Solution

    run = word_problem_run(tmp_path / "run", "model.attention=tp")
    real = Solution.to_json

    def with_a_nan(self):
        answer = real(self)
        answer["attention"] = [{"weights": [[float("nan"), float("inf")]]}]
        return answer

    monkeypatch.setattr(Solution, "to_json", with_a_nan)
    main(["solve", str(run), TEXT, "--json"])
    output = json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
    assert output["attention"] == [{"weights": [[None, None]]}]


@pytest.mark.parametrize("text", [
    TEXT + " \udcff",  # a byte of argv that was not UTF-8, kept by Python as a lone surrogate
    "Tom has 5 apples and $x^$ more. How many?",  # a "$" pair that matplotlib would read as broken mathtext
    "Tom has $5 and $\\foo$. He buys 3 more.\x00\x1b[31m\nHow many?",  # an unknown TeX command, control characters
])
def test_the_cli_draws_the_maps_whatever_text_the_problem_holds(tmp_path, capsys, text):
    run = word_problem_run(tmp_path / "run")
    picture = tmp_path / "attention.png"
    code = main(["solve", str(run), text, "--attention", str(picture)])
    captured = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in captured.err, captured.err
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_titles_and_labels_are_drawn_literally_whatever_they_hold(tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from neuromath.api import AttentionMap
    from neuromath.fileio import figure_text

    odd = ["$x^$", "\udcff", "a\x00\nb", "$\\foo$", "é" * 500]
    shown = [figure_text(text) for text in odd]
    assert shown[0] == "\\$x^\\$" and shown[1] == "\ufffd" and shown[2] == "a b" and len(shown[4]) == 200
    figure = Figure()
    FigureCanvasAgg(figure)
    for index, text in enumerate(shown):  # each drawn as text: no mathtext error, no encoding error
        figure.text(0.1, index / 6, text)
    figure.canvas.draw()
    maps = [AttentionMap(odd[0], "encoder", tuple(odd[:2]), tuple(odd), tuple(odd), np.full((2, 5, 5), 0.2))]
    path = plot_attention(maps, tmp_path / "odd.png", title=odd[3] + odd[1] + odd[2])
    assert path.read_bytes()[:4] == b"\x89PNG"
