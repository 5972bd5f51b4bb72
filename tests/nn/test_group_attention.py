"""neuromath/nn/group_attention.py and the span roles of neuromath/tasks/word_problems.py: the four masks of Li et
al. 2019 on a hand-worked English and Chinese problem, compared with masks written out span by span."""

import pytest
import torch

from neuromath.errors import ConfigError
from neuromath.nn.group_attention import GROUPS, GroupAttention, GroupAttentionBlock, group_masks
from neuromath.tasks.word_problems import span_roles, split_spans

ENGLISH = "tom has n0 apples , it is sunny , he buys n1 more . how many apples ?".split()
ENGLISH_SPANS = "AAAAABBBBCCCCCQQQQ"  # A and C hold numbers, B does not, Q is the question
CHINESE = "小明 有 n0 个 苹果 ， 吃 了 n1 个 。 还 剩 多少 个 ？".split()
CHINESE_SPANS = "AAAAAACCCCCQQQQQ"

# Allowed key spans per query span, written out by hand from the paper's definitions; "self" = only itself.
EXPECTED = {
    "global": {"A": "ABCQ", "B": "ABCQ", "C": "ABCQ", "Q": "ABCQ"},
    "quantity": {"A": "A", "B": "B", "C": "C", "Q": "Q"},
    "quantity_pair": {"A": "C", "B": "self", "C": "A", "Q": "AC"},
    "question": {"A": "Q", "B": "self", "C": "Q", "Q": "AC"},
}


def expected_mask(spans: str, group: str, length: int) -> torch.Tensor:
    mask = torch.zeros(length, length, dtype=torch.bool)
    for i, query_span in enumerate(spans):
        rule = EXPECTED[group][query_span]
        for j, key_span in enumerate(spans):
            mask[i, j] = (i == j) if rule == "self" else key_span in rule
    return mask


def roles_batch(problems):
    length = max(len(tokens) for tokens in problems)
    spans = torch.zeros(len(problems), length, dtype=torch.long)
    quantity = torch.zeros(len(problems), length, dtype=torch.bool)
    question = torch.zeros(len(problems), length, dtype=torch.bool)
    valid = torch.zeros(len(problems), length, dtype=torch.bool)
    for row, tokens in enumerate(problems):
        span_ids, in_quantity, in_question = span_roles(tokens)
        n = len(tokens)
        spans[row, :n] = torch.tensor(span_ids)
        spans[row, n:] = -1  # padding: a span of its own
        quantity[row, :n] = torch.tensor(in_quantity)
        question[row, :n] = torch.tensor(in_question)
        valid[row, :n] = True
    return spans, quantity, question, valid


def test_spans_split_at_english_and_chinese_commas_and_periods():
    letters = {0: "A", 1: "B", 2: "C", 3: "Q"}
    assert "".join(letters[s] for s in split_spans(ENGLISH)) == ENGLISH_SPANS
    assert split_spans(CHINESE) == [0] * 6 + [1] * 5 + [2] * 5
    assert split_spans("n0 apples .".split()) == [0, 0, 0]  # a final period opens no empty span
    spans, quantity, question = span_roles(CHINESE)
    assert quantity == [True] * 11 + [False] * 5 and question == [False] * 11 + [True] * 5


@pytest.mark.parametrize("group", GROUPS)
def test_masks_equal_the_hand_written_ones_with_padding(group):
    masks = group_masks(*roles_batch([ENGLISH, CHINESE]))
    length, real = len(ENGLISH), len(CHINESE)
    assert torch.equal(masks[group][0], expected_mask(ENGLISH_SPANS, group, length))
    # the shorter problem's real queries (the expected rows are False on its padding keys); padding queries'
    # rows are never read
    assert torch.equal(masks[group][1, :real], expected_mask(CHINESE_SPANS, group, length)[:real])


def test_a_query_with_nothing_to_attend_to_sees_itself_only():
    torch.manual_seed(0)
    masks = group_masks(*roles_batch([ENGLISH]))
    attention = GroupAttention(16, groups=("quantity_pair",), heads_per_group=4).eval()
    x = torch.randn(1, len(ENGLISH), 16)
    out = attention(x, masks)
    values = attention.qkv(x).chunk(3, dim=-1)[2]  # (1, T, D)
    sunny = ENGLISH.index("sunny")  # span B: no numbers, so no quantity pair
    assert torch.allclose(out[0, sunny], attention.out(values[0, sunny]), atol=1e-6)
    assert torch.isfinite(out).all()


def test_padding_does_not_change_the_real_tokens():
    torch.manual_seed(1)
    block = GroupAttentionBlock(16, 32).eval()
    x = torch.randn(1, len(CHINESE), 16)
    alone = block(x, group_masks(*roles_batch([CHINESE])))
    padded_x = torch.cat([x, torch.randn(1, 5, 16)], dim=1)
    spans, quantity, question, valid = roles_batch([CHINESE])
    pad = lambda t, value: torch.cat([t, torch.full((1, 5), value, dtype=t.dtype)], dim=1)  # noqa: E731
    padded = block(padded_x, group_masks(pad(spans, -1), pad(quantity, False), pad(question, False), pad(valid, False)))
    assert torch.allclose(alone, padded[:, : len(CHINESE)], atol=1e-6)


def test_head_layout_and_errors():
    assert GroupAttention(64).n_heads == 8
    assert GroupAttention(64, groups=("global",), heads_per_group=8).n_heads == 8  # the Table 3 ablation
    with pytest.raises(ConfigError, match="must be among"):
        GroupAttention(64, groups=("local",))
    with pytest.raises(ConfigError, match="not divisible"):
        GroupAttention(60)
