"""Per-operator matrix products of the tree cells, one per run of a level's rows (the tree engine sorts a level's
internal nodes by operator, so each operator is one run, a *segment*), and the per-batch machinery that keeps their
backward cheap: each stacked weight cut into its operators once per batch (``operator_slices_per_batch``) and, in
training, its gradient summed once per operator over all levels (``_DeferredWeightGradient``).

Per-operator parameters are stacked tensors ``(n_operators, in, out)``; ``operator_linear`` applies operator k's slice
to its run of rows, ``operator_bilinear`` a third-order tensor per operator, ``gather_per_operator`` a per-operator
row of a table to every node.
"""

from __future__ import annotations

import contextlib
import contextvars

import torch

Segments = list[tuple[int, int, int]]  # (operator_id, start, end) runs over the rows of one level


_BATCH_SLICES: contextvars.ContextVar[dict | None] = contextvars.ContextVar("operator_slices", default=None)


@contextlib.contextmanager
def operator_slices_per_batch():
    """Within it (one forward of the tree engine over a batch), ``operator_linear`` cuts each stacked weight into its
    operators once instead of once per level. The backward of that cut stacks the operators' gradients into one
    tensor of the weight's full size, so cutting per level made, per level, a full-size stack mostly of zeros: a
    third of a Tree-LSTM training step went to those concatenations (``benchmarks/trees.py``'s workload)."""
    token = _BATCH_SLICES.set({})
    try:
        yield
    finally:
        _BATCH_SLICES.reset(token)


def per_operator(weight: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``weight.unbind(0)``, made once per batch inside ``operator_slices_per_batch`` (a view of the same memory,
    shape and strides is the same weight: ``operator_bilinear`` reshapes its tensor at every call)."""
    cache = _BATCH_SLICES.get()
    if cache is None:
        return weight.unbind(0)
    key = (weight.data_ptr(), tuple(weight.shape), weight.stride(), weight.dtype, weight.requires_grad)
    if key not in cache:
        cache[key] = (weight, weight.unbind(0))  # the tensor is kept so that its memory cannot be reused meanwhile
    return cache[key][1]


def operator_linear(inputs: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                    segments: Segments) -> torch.Tensor:
    """Apply operator k's slice ``weight[k]`` (in, out) and ``bias[k]`` (out,) to the rows of its run.

    inputs (n, in); weight (n_operators, in, out); bias (n_operators, out) or None; segments: (operator_id, start,
    end) runs that cover the n rows in order. Returns (n, out); one matrix product per run.

    The rows are cut into runs with one ``split`` and the stacked weight into operators with one ``unbind``: their
    backward passes join the gradients with one concatenation each, where slicing or indexing per run would build
    a full-size zero gradient for every run. In training inside ``operator_slices_per_batch`` (float32, no
    autocast), ``_deferred_operator_linear`` instead computes the weight's gradient once per batch.
    """
    if _defers_weight_gradient(inputs, weight):
        return _deferred_operator_linear(inputs, weight, bias, segments)
    if len(segments) == 1:
        operator_id = segments[0][0]
        if bias is None:
            return inputs @ weight[operator_id]
        return torch.addmm(bias[operator_id], inputs, weight[operator_id])
    runs = inputs.split([end - start for _, start, end in segments])
    weight_per_operator = per_operator(weight)
    outputs = []
    if bias is None:
        for (operator_id, _, _), rows in zip(segments, runs):
            outputs.append(rows @ weight_per_operator[operator_id])
    else:
        bias_per_operator = per_operator(bias)
        for (operator_id, _, _), rows in zip(segments, runs):
            outputs.append(torch.addmm(bias_per_operator[operator_id], rows, weight_per_operator[operator_id]))
    return torch.cat(outputs, dim=0)


# The weight gradient of a batch in one matrix product per operator.
#
# Through autograd, every run of every level adds its own (in, out) product X_run^T G_run to its operator's gradient:
# a Tree-LSTM batch of ``benchmarks/trees.py`` has about 130 runs, so 130 small products, sums and accumulations in
# the backward pass, for 14 operators. Here each level's product is one autograd node whose backward only computes the
# gradient of its inputs (what the levels below need) and leaves (X, G) of its runs in a list; the weight passes
# through an identity node (``_DeferredWeightGradient``) that every level reads, so autograd runs its backward after
# all the levels' and it computes each operator's gradient from all its rows at once: X_op^T G_op. The gradient
# still reaches the parameter through autograd (optimisers, DDP's hooks and ``torch.autograd.grad`` see it as usual).


# Wider inputs are not deferred: gathering every level's rows per operator copies them all, which cost more than the
# per-run products save on the second-order Tree-RNN's outer products (2,500 wide at hidden 50), while the Tree-LSTM's
# and MTree-LSTM's 100-wide inputs gained. ``benchmarks/tree_speed.py --baseline REV`` measures a change of it.
DEFERRED_MAX_INPUTS = 512


def _defers_weight_gradient(inputs: torch.Tensor, weight: torch.Tensor) -> bool:
    return (_BATCH_SLICES.get() is not None and torch.is_grad_enabled() and weight.requires_grad
            and inputs.size(1) <= DEFERRED_MAX_INPUTS and not torch.is_autocast_enabled(inputs.device.type)
            and inputs.dtype == weight.dtype)


def _deferred_operator_linear(inputs, weight, bias, segments):
    weight_tap, weight_parts, weight_rows = _tapped(weight, True)
    if bias is None:
        bias_tap = bias_parts = bias_rows = None
    else:
        bias_tap, bias_parts, bias_rows = _tapped(bias, False)
    return _OperatorProduct.apply(inputs, weight_tap, bias_tap, segments, weight_parts, bias_parts,
                                  weight_rows, bias_rows)


def _tapped(weight: torch.Tensor, keeps_inputs: bool):
    """The batch's identity node over ``weight``, its per-operator slices (detached) and the list the levels fill."""
    cache = _BATCH_SLICES.get()
    key = ("tap", weight.data_ptr(), tuple(weight.shape), weight.stride(), weight.dtype)
    if key not in cache:
        rows: list = []
        tap = _DeferredWeightGradient.apply(weight, rows, keeps_inputs)
        cache[key] = (weight, tap, weight.detach().unbind(0), rows)
    return cache[key][1:]


class _DeferredWeightGradient(torch.autograd.Function):
    """Identity on a stacked weight (n_operators, ...); its backward sums the gradient of every operator's rows that
    the levels left in ``rows``: (inputs, output gradient, segments) for a weight, (output gradient, segments) for a
    bias."""

    @staticmethod
    def forward(ctx, weight, rows, keeps_inputs):
        ctx.set_materialize_grads(False)
        ctx.rows, ctx.keeps_inputs = rows, keeps_inputs
        ctx.shape, ctx.dtype, ctx.device = weight.shape, weight.dtype, weight.device
        return weight.view_as(weight)

    @staticmethod
    def backward(ctx, grad):
        entries = list(ctx.rows)
        ctx.rows.clear()  # a second backward (retain_graph) collects its own
        total = torch.zeros(ctx.shape, dtype=ctx.dtype, device=ctx.device) if grad is None else grad.clone()
        if not entries:
            return total, None, None
        segments = [segment for entry in entries for segment in entry[-1]]
        row_operators = torch.repeat_interleave(  # (rows of every level,) the operator of each row
            torch.tensor([operator_id for operator_id, _, _ in segments], device=ctx.device),
            torch.tensor([end - start for _, start, end in segments], device=ctx.device))
        output_grads = torch.cat([entry[-2] for entry in entries])  # (rows of every level, out)
        if not ctx.keeps_inputs:  # a bias: each row's gradient added to its operator's
            return total.index_add_(0, row_operators, output_grads), None, None
        inputs = torch.cat([entry[0] for entry in entries])  # (rows of every level, in)
        # The rows of each operator gathered into one run: X_op^T G_op, one product per operator.
        order = torch.argsort(row_operators, stable=True)
        inputs, output_grads = inputs.index_select(0, order), output_grads.index_select(0, order)
        start = 0
        for operator_id, count in enumerate(torch.bincount(row_operators, minlength=ctx.shape[0]).tolist()):
            if count:
                total[operator_id].addmm_(inputs[start:start + count].t(), output_grads[start:start + count])
                start += count
        return total, None, None


class _OperatorProduct(torch.autograd.Function):
    """``operator_linear`` of one level with the weight (and bias) read through ``_DeferredWeightGradient``: the
    backward computes the inputs' gradient and leaves the runs' rows for the weight's."""

    @staticmethod
    def forward(ctx, inputs, weight_tap, bias_tap, segments, weight_parts, bias_parts, weight_rows, bias_rows):
        output = inputs.new_empty(inputs.size(0), weight_parts[0].size(1))
        for operator_id, start, end in segments:  # each run's product written into its rows of the output
            if bias_parts is None:
                torch.mm(inputs[start:end], weight_parts[operator_id], out=output[start:end])
            else:
                torch.addmm(bias_parts[operator_id], inputs[start:end], weight_parts[operator_id],
                            out=output[start:end])
        ctx.save_for_backward(inputs)
        ctx.segments, ctx.weight_parts, ctx.weight_rows, ctx.bias_rows = segments, weight_parts, weight_rows, bias_rows
        return output

    @staticmethod
    def backward(ctx, output_grad):
        (inputs,) = ctx.saved_tensors
        segments = ctx.segments
        ctx.weight_rows.append((inputs, output_grad, segments))
        if ctx.bias_rows is not None:
            ctx.bias_rows.append((output_grad, segments))
        inputs_grad = None
        if ctx.needs_input_grad[0]:
            inputs_grad = output_grad.new_empty(inputs.shape)
            for operator_id, start, end in segments:
                torch.mm(output_grad[start:end], ctx.weight_parts[operator_id].t(), out=inputs_grad[start:end])
        return inputs_grad, None, None, None, None, None, None, None


def operator_bilinear(left: torch.Tensor, right: torch.Tensor, weight: torch.Tensor,
                      segments: Segments) -> torch.Tensor:
    """Third-order product per operator: ``out[n, k] = sum_ij left[n, i] * weight[op(n), i, j, k] * right[n, j]``.

    left (n, I), right (n, J), weight (n_operators, I, J, K) -> (n, K). The outer products of all rows are formed
    at once and each operator's tensor, seen as an (I*J, K) matrix, is applied to its run by ``operator_linear``:
    one matrix product per run, none per node.
    """
    n_operators, in_left, in_right, out = weight.shape
    outer = (left.unsqueeze(2) * right.unsqueeze(1)).reshape(left.shape[0], in_left * in_right)  # (n, I*J)
    weight_as_matrices = weight.reshape(n_operators, in_left * in_right, out)  # (ops, I*J, K)
    return operator_linear(outer, weight_as_matrices, None, segments)  # (n, K)


def gather_per_operator(table: torch.Tensor, operator_ids: torch.Tensor) -> torch.Tensor:
    """Rows of a per-operator table (n_operators, d) for each node: (n, d)."""
    return table.index_select(0, operator_ids)
