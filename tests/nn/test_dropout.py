import pytest
import torch

from neuromath.nn.dropout import Dropout, apply_dropout


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_drops_a_share_p_and_scales_the_rest_by_one_over_one_minus_p(p, dtype):
    torch.manual_seed(0)
    x = (torch.rand(400_000) + 0.5).to(dtype)  # no zeros of its own
    out = apply_dropout(x, p)
    assert out.dtype == dtype and out.shape == x.shape
    dropped = out.eq(0)
    assert abs(dropped.float().mean().item() - p) < 0.005
    torch.testing.assert_close(out[~dropped], (x[~dropped].float() / (1 - p)).to(dtype))


def test_the_gradient_passes_only_through_kept_elements_scaled_as_they_were():
    torch.manual_seed(1)
    x = torch.randn(64, 33, requires_grad=True)
    out = apply_dropout(x, 0.3)
    out.sum().backward()
    kept = out.detach().ne(0)
    torch.testing.assert_close(x.grad, kept.float() / 0.7)


def test_evaluation_and_p_zero_return_the_input_itself_and_p_one_gives_zeros():
    x = torch.randn(5, 4)
    assert apply_dropout(x, 0.5, training=False) is x
    assert apply_dropout(x, 0.0) is x
    assert torch.equal(apply_dropout(x, 1.0), torch.zeros(5, 4))
    with pytest.raises(ValueError, match="must be in"):
        apply_dropout(x, 1.5)


def test_a_seeded_run_draws_the_same_masks_again():
    x = torch.ones(1000)
    torch.manual_seed(7)
    first = apply_dropout(x, 0.5)
    torch.manual_seed(7)
    assert torch.equal(apply_dropout(x, 0.5), first)
    assert not torch.equal(apply_dropout(x, 0.5), first)  # the generator moved on


def test_the_module_is_an_nn_dropout_that_acts_in_training_only():
    layer = Dropout(0.5)
    assert isinstance(layer, torch.nn.Dropout) and layer.p == 0.5 and not layer.state_dict()
    x = torch.ones(10_000)
    assert layer(x).eq(0).any()
    layer.eval()
    assert layer(x) is x
