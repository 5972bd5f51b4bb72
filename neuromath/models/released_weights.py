"""The released models of Arabshahi et al. (ForoughA/recursiveMemNet, MIT licence: "Tree Stack Memory Units",
Arabshahi, Lu, Mundra, Singh, Anandkumar 2019) as neuromath tree classifiers: their PyTorch state dicts mapped, key by
key, onto the weights of neuromath's ``tree_lstm`` and ``tree_smu`` cells, and their fixed leaf vocabulary onto a
neuromath node vocabulary. Their code was read to check every detail and is not copied; what is mapped, and how:

Their models (``LSTMTrees``; ``StackNNTreesMem2out`` with ``--stack-type stack --top-k 1 --gate-push-pop
--normalize-action --no-op``, tanh node and stack activations, stack size 5) have one block of parameters per
function: ``<fn>.<gate>`` (Tree-LSTM) or ``<fn>.o_linear`` and ``<fn>_stack.<gate>`` (Tree-SMU), for 25 unary
functions and 4 binary ones (Add, Mul, Pow and a two-argument log); ``Symbol`` embeds the leaves, ``bias`` is the
bias of the output dot(h_left, h_right) + bias (the logit of "true"), and ``Number_enc`` / ``Number_dec`` (the
numeric-data networks) are never used on symbolic equations. Each ``nn.Linear`` weight (out, in) becomes the
transposed block of neuromath's stacked per-operator weight (n_operators, 2H, kH) that the cell reads with
x = [h_l; h_r]:

* Tree-LSTM: columns [i, f_l, f_r, o, u] = their ``data``, ``forget_left_by_*``, ``forget_right_by_*``,
  ``output``, ``input`` (the ``*_left`` weight reads h_l, rows 0..H-1; ``*_right`` reads h_r, rows H..2H-1). A unary
  function has one child: its ``data``, ``forget``, ``output`` and ``input`` fill the h_l rows of i, f_l, o and u; the
  h_r rows and the f_r block stay zero, which is exact because the engine gives a unary node a zero right child
  (h = 0, c = 0). Their leaves are the embedding with an empty memory: ``model.tree_leaf: embedding``.
* Tree-SMU: columns [push, pop, no-op, g_l, g_r, pushed, output] = their ``push_gate_linear``, ``pop_gate_linear``,
  ``no_op_gate_linear``, ``gate_linear_l`` (unary: ``gate_linear``), ``gate_linear_r`` (unary: zero, the right stack
  is empty), ``input_linear`` and ``o_linear``; this is neuromath's ``tree_smu`` as it is (softmax of the three
  sigmoid gates per coordinate, h = sigmoid(o) * tanh(top of the node's new stack), leaves = embedding, empty stack).

Operators: neuromath's equations have 17 (Add, Mul, Pow and 14 unary functions, ``log`` unary among them). Their 11
hyperbolic functions have no neuromath operator and are left out. Their ``log`` is binary (log(x, base)); neuromath's
unary ``log`` gets its h_l rows, as if the base were a zero state: an approximation of a node their model never saw
with one child. Leaves: their vocabulary (``equation_verification/constants.py``) keys ``Symbol_var_0..9``,
``Integer_<n>`` for n in 0..10, -2, -3, ``Rational_2/5``, ``Rational_-1/2``, ``Rational_0``, ``Float_0.7`` and the
constants ``NegativeOne``, ``NaN``, ``Infinity``, ``Exp1``, ``Pi``, ``One``, ``Half``; with their default
``unify_one_zero`` a ``One`` leaf reads ``Integer_1`` and a ``Rational 0`` reads ``Integer_0``, which is what
neuromath's canonical leaf tokens do by themselves (``1``, ``0``). So each row becomes the neuromath token of that
leaf (``var_0``, ``1``, ``-2``, ``2/5``, ``0.7``, ``-1``, ``pi``, ``1/2``); the rows of ``One`` and ``Rational_0``
(unused under unify_one_zero) and of ``NaN``, ``Infinity``, ``Exp1`` (no neuromath leaf) are left out. Any other
leaf, which their code cannot read at all (a KeyError), is neuromath's unknown token, a zero vector; so are the
special tokens and the operator names (in the vocabulary so that solve does not call them unknown; never read as
leaves).
"""

from __future__ import annotations

from typing import Mapping

import torch

from neuromath.errors import DataFormatError
from neuromath.models.classifiers import OPERATOR_IDS, OPERATORS
from neuromath.text import Vocabulary

RELEASED_MODELS = ("tree_lstm", "tree_smu")  # neuromath cell names of the two released model classes

UNARY = ("sin", "cos", "csc", "sec", "tan", "cot", "asin", "acos", "acsc", "asec", "atan", "acot",
         "sinh", "cosh", "csch", "sech", "tanh", "coth", "asinh", "acosh", "acsch", "asech", "atanh", "acoth", "exp")
BINARY = ("Add", "Mul", "Pow", "log")

# their leaf vocabulary in row order (constants.py: the symbol classes, then the constants)
LEAF_KEYS = (
    tuple(f"Symbol_var_{d}" for d in range(10))
    + tuple(f"Integer_{n}" for n in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -2, -3))
    + ("Rational_2/5", "Rational_-1/2", "Rational_0", "Float_0.7")
    + ("NegativeOne", "NaN", "Infinity", "Exp1", "Pi", "One", "Half")
)
# their key -> neuromath's leaf token; keys absent are left out (see the module docstring)
LEAF_TOKENS = {
    **{f"Symbol_var_{d}": f"var_{d}" for d in range(10)},
    **{f"Integer_{n}": str(n) for n in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -2, -3)},
    "Rational_2/5": "2/5", "Rational_-1/2": "-1/2", "Float_0.7": "0.7",
    "NegativeOne": "-1", "Pi": "pi", "Half": "1/2",
}
STACK_SIZE = 5  # their --memory-size default, with which the released Tree-SMU was trained
SOURCE = "ForoughA/recursiveMemNet"

LSTM_UNARY_GATES = ("data", "forget", "output", "input")  # -> i, f_l, o, u
LSTM_BINARY = {  # neuromath column block -> (weight reading h_l, weight reading h_r, bias)
    0: ("data_left", "data_right", "data_bias"),
    1: ("forget_left_by_left", "forget_left_by_right", "forget_bias_left"),
    2: ("forget_right_by_left", "forget_right_by_right", "forget_bias_right"),
    3: ("output_left", "output_right", "output_bias"),
    4: ("input_left", "input_right", "input_bias"),
}
SMU_GATES = ("push_gate_linear", "pop_gate_linear", "no_op_gate_linear")  # their stack gates, columns 0-2


def _number_networks(hidden: int) -> dict[str, tuple[int, ...]]:
    return {
        "Number_enc.linear1.weight": (hidden, 1), "Number_enc.linear1.bias": (hidden,),
        "Number_enc.linear2.weight": (hidden, hidden), "Number_enc.linear2.bias": (hidden,),
        "Number_dec.linear1.weight": (hidden, hidden), "Number_dec.linear1.bias": (hidden,),
        "Number_dec.linear2.weight": (1, hidden), "Number_dec.linear2.bias": (1,),
    }


def released_keys(model: str, hidden: int) -> dict[str, tuple[int, ...]]:
    """Every key of the authors' state dict for ``model`` (``tree_lstm``: ``LSTMTrees``; ``tree_smu``:
    ``StackNNTreesMem2out`` with gated push/pop/no-op) of hidden size ``hidden``, with its shape, in their order."""
    keys: dict[str, tuple[int, ...]] = {"bias": (1,)}
    h, h2 = (hidden, hidden), (hidden, 2 * hidden)
    if model == "tree_lstm":
        for name in UNARY:
            for gate in ("data", "forget", "output", "input"):
                keys[f"{name}.{gate}.weight"], keys[f"{name}.{gate}.bias"] = h, (hidden,)
        for name in BINARY:
            for bias in ("data_bias", "forget_bias_left", "forget_bias_right", "output_bias", "input_bias"):
                keys[f"{name}.{bias}"] = (hidden,)
            for weight in ("data_left", "data_right", "forget_left_by_left", "forget_left_by_right",
                           "forget_right_by_left", "forget_right_by_right", "output_left", "output_right",
                           "input_left", "input_right"):
                keys[f"{name}.{weight}.weight"] = h
    elif model == "tree_smu":
        for name, shape, gates in ((n, h, SMU_GATES + ("gate_linear", "input_linear")) for n in UNARY):
            keys[f"{name}.o_linear.weight"], keys[f"{name}.o_linear.bias"] = shape, (hidden,)
            for gate in gates:
                keys[f"{name}_stack.{gate}.weight"], keys[f"{name}_stack.{gate}.bias"] = shape, (hidden,)
        for name in BINARY:
            keys[f"{name}.o_linear.weight"], keys[f"{name}.o_linear.bias"] = h2, (hidden,)
            for gate in SMU_GATES + ("gate_linear_l", "gate_linear_r", "input_linear"):
                keys[f"{name}_stack.{gate}.weight"], keys[f"{name}_stack.{gate}.bias"] = h2, (hidden,)
    else:
        raise ValueError(f"model must be one of {', '.join(RELEASED_MODELS)}, not {model!r}")
    keys.update(_number_networks(hidden))
    keys["Symbol.weight"] = (len(LEAF_KEYS), hidden)
    return keys


def check_released(state: Mapping[str, torch.Tensor], model: str, path: str) -> int:
    """The hidden size of a released state dict of ``model``; a DataFormatError naming ``path`` and the first key or
    shape that differs from the authors' model (their model of another class, another file, a cut file)."""
    embedding = state.get("Symbol.weight")
    if embedding is None or embedding.dim() != 2:
        raise DataFormatError(path, None, f"not a released {model} state dict: no leaf embedding Symbol.weight "
                                          "(rows, hidden)")
    hidden = int(embedding.shape[1])
    expected = released_keys(model, hidden)
    for key, shape in expected.items():
        if key not in state:
            raise DataFormatError(path, None, f"not a released {model} state dict of hidden size {hidden}: "
                                              f"no key {key}")
        if tuple(state[key].shape) != shape:
            raise DataFormatError(path, None, f"not a released {model} state dict of hidden size {hidden}: {key} "
                                              f"has shape {tuple(state[key].shape)}, the model's is {shape}")
    unexpected = [key for key in state if key not in expected]
    if unexpected:
        raise DataFormatError(path, None, f"not a released {model} state dict: a key the model does not have, "
                                          f"{unexpected[0]}" + (f" (and {len(unexpected) - 1} more)"
                                                                if len(unexpected) > 1 else ""))
    return hidden


def released_vocabulary() -> Vocabulary:
    """The node vocabulary of an imported model: the leaf tokens their embedding has a row for, in their row order,
    then neuromath's operator names (never read as leaves)."""
    return Vocabulary([LEAF_TOKENS[key] for key in LEAF_KEYS if key in LEAF_TOKENS] + list(OPERATORS))


def _transposed(weight: torch.Tensor) -> torch.Tensor:
    return weight.detach().to(torch.float32).t()


def convert_released(state: Mapping[str, torch.Tensor], model: str, hidden: int,
                     vocab: Vocabulary) -> dict[str, torch.Tensor]:
    """The state dict of neuromath's ``TreeClassifier`` with cell ``model`` (hidden size ``hidden``, node vocabulary
    ``vocab`` from ``released_vocabulary``) holding the authors' weights ``state`` (checked by ``check_released``)."""
    H = hidden
    embedding = torch.zeros(len(vocab), H)
    rows = {key: row for row, key in enumerate(LEAF_KEYS)}
    for key, token in LEAF_TOKENS.items():
        embedding[vocab.index[token]] = state["Symbol.weight"][rows[key]].float()
    if model == "tree_lstm":
        weight, bias = torch.zeros(len(OPERATORS), 2 * H, 5 * H), torch.zeros(len(OPERATORS), 5 * H)
        for name, op in OPERATOR_IDS.items():
            if name in BINARY and not (name == "log"):  # a binary function of both: both children
                for block, (left, right, block_bias) in LSTM_BINARY.items():
                    columns = slice(block * H, (block + 1) * H)
                    weight[op, :H, columns] = _transposed(state[f"{name}.{left}.weight"])
                    weight[op, H:, columns] = _transposed(state[f"{name}.{right}.weight"])
                    bias[op, columns] = state[f"{name}.{block_bias}"].float()
            elif name == "log":  # their binary log, read with one child (h_l rows)
                for block, (left, _, block_bias) in LSTM_BINARY.items():
                    columns = slice(block * H, (block + 1) * H)
                    weight[op, :H, columns] = _transposed(state[f"{name}.{left}.weight"])
                    bias[op, columns] = state[f"{name}.{block_bias}"].float()
            else:  # unary: i, f_l, o, u from the one child; f_r reads an empty memory
                for block, gate in zip((0, 1, 3, 4), LSTM_UNARY_GATES):
                    columns = slice(block * H, (block + 1) * H)
                    weight[op, :H, columns] = _transposed(state[f"{name}.{gate}.weight"])
                    bias[op, columns] = state[f"{name}.{gate}.bias"].float()
    else:
        weight, bias = torch.zeros(len(OPERATORS), 2 * H, 7 * H), torch.zeros(len(OPERATORS), 7 * H)
        for name, op in OPERATOR_IDS.items():
            stack = f"{name}_stack"
            binary = name in BINARY
            sources = [f"{stack}.{gate}" for gate in SMU_GATES]
            sources += ([f"{stack}.gate_linear_l", f"{stack}.gate_linear_r"] if binary
                        else [f"{stack}.gate_linear", None])
            sources += [f"{stack}.input_linear", f"{name}.o_linear"]
            for block, source in enumerate(sources):
                if source is None:
                    continue
                columns = slice(block * H, (block + 1) * H)
                read = _transposed(state[f"{source}.weight"])  # (H or 2H, H)
                if binary and name == "log":
                    read = read[:H]  # their binary log, read with one child (h_l rows)
                weight[op, : read.shape[0], columns] = read
                bias[op, columns] = state[f"{source}.bias"].float()
    return {
        "encoder.leaf_embedding.weight": embedding,
        "encoder.cell.weight": weight,
        "encoder.cell.bias": bias,
        "output.bias": state["bias"].detach().float().reshape(()),
    }
