"""Attention and Transformers against PyTorch: scaled_dot_product_attention (forward, grads,
grad-of-grad, masks, on the strict stand-in), MultiheadAttention and the Transformer layers with
torch's state_dict loaded into ours (names and shapes must match), outputs and gradients compared
in eval mode (dropout off), plus reprs, defaults and torch's errors."""

import warnings

import numpy as np
import pytest
from module_oracle import compare_module, state_shapes

import autogradcli as ag
import autogradcli.nn as nn
import autogradcli.nn.functional as F


def _check(*args, **kw):
    from oracle import check

    check(*args, **kw)


def _sdpa(**kw):
    def fn(m, q, k, v, *mask):
        mod = m.nn.functional if m.__name__ == "torch" else F
        if mask:
            kw["attn_mask"] = mask[0]
        return mod.scaled_dot_product_attention(q, k, v, **kw)

    return fn


def test_sdpa_plain_and_scaled():
    _check(_sdpa(), (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7))
    _check(_sdpa(scale=0.3), (3, 4), (5, 4), (5, 2))
    _check(_sdpa(), (2, 5, 4), (2, 6, 4), (2, 6, 3), dtype="float32")


def test_sdpa_causal():
    _check(_sdpa(is_causal=True), (2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3))
    _check(_sdpa(is_causal=True), (2, 4, 4), (2, 6, 4), (2, 6, 3))  # L < S: top-left aligned


def test_sdpa_float_and_bool_masks():
    rng = np.random.default_rng(3)
    fmask = rng.standard_normal((5, 6))
    _check(_sdpa(), (2, 5, 4), (2, 6, 4), (2, 6, 3), fmask, grad_inputs=[0, 1, 2, 3])
    bmask = rng.random((2, 1, 5, 6)) > 0.3
    bmask[..., 0] = True
    _check(_sdpa(), (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3), bmask)


def test_sdpa_fully_masked_rows_give_zeros():
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False
    _check(_sdpa(), (2, 4, 3), (2, 5, 3), (2, 5, 3), mask)
    fmask = np.zeros((4, 5))
    fmask[2] = -np.inf
    _check(_sdpa(), (2, 4, 3), (2, 5, 3), (2, 5, 3), fmask, grad_inputs=[0, 1, 2])


def test_sdpa_gqa():
    # torch's CPU flash kernel has no double backward: first order only here
    _check(_sdpa(enable_gqa=True), (2, 4, 5, 3), (2, 2, 6, 3), (2, 2, 6, 3), gradgrad=False)


def test_sdpa_dropout_statistics():
    ag.manual_seed(0)
    q, k = ag.zeros(1, 1, 400, 8), ag.zeros(1, 1, 400, 8)  # uniform weights 1/400
    v = ag.ones(1, 1, 400, 1)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy().ravel()
    # each output is (kept count) / 400 / 0.75: mean 1, std sqrt(0.25 * 0.75 / 400) / 0.75
    assert abs(out.mean() - 1.0) < 4 * 0.0289 / 20  # 400 rows averaged
    assert 0.5 * 0.0289 < out.std() < 1.5 * 0.0289
    same = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0).numpy()
    assert np.allclose(same, 1.0)


def test_sdpa_errors_match_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    q, k, v = (2, 3, 4), (2, 5, 4), (2, 5, 6)
    mask = np.ones((3, 5), dtype=bool)
    with pytest.raises(RuntimeError) as theirs:
        TF.scaled_dot_product_attention(
            torch.randn(*q), torch.randn(*k), torch.randn(*v), torch.tensor(mask), is_causal=True
        )
    with pytest.raises(RuntimeError) as ours:
        F.scaled_dot_product_attention(
            ag.randn(*q), ag.randn(*k), ag.randn(*v), ag.tensor(mask), is_causal=True
        )
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        TF.scaled_dot_product_attention(torch.randn(*q), torch.randn(*k).double(), torch.randn(*v))
    with pytest.raises(RuntimeError) as ours:
        F.scaled_dot_product_attention(ag.randn(*q), ag.randn(*k, dtype=ag.float64), ag.randn(*v))
    assert str(ours.value) == str(theirs.value)


# ---- MultiheadAttention ----------------------------------------------------------------------


def _mha_call(**kw):
    def call(layer, q, k, v, *masks):
        extra = dict(kw)
        for name, m in zip(("key_padding_mask", "attn_mask"), masks):
            if m is not None:
                extra[name] = m
        return layer(q, k, v, **extra)

    return call


def _bool(a):
    return np.asarray(a, dtype=bool)


MHA = [
    ("self", lambda m: m.MultiheadAttention(8, 2), ((5, 3, 8),) * 3, {}),
    ("cross", lambda m: m.MultiheadAttention(8, 4), ((5, 3, 8), (6, 3, 8), (6, 3, 8)), {}),
    (
        "batch_first",
        lambda m: m.MultiheadAttention(8, 2, batch_first=True),
        ((3, 5, 8), (3, 6, 8), (3, 6, 8)),
        {},
    ),
    (
        "kdim_vdim",
        lambda m: m.MultiheadAttention(8, 2, kdim=3, vdim=5),
        ((5, 2, 8), (6, 2, 3), (6, 2, 5)),
        {},
    ),
    (
        "per_head_weights",
        lambda m: m.MultiheadAttention(8, 2),
        ((4, 2, 8),) * 3,
        {"average_attn_weights": False},
    ),
    ("no_weights", lambda m: m.MultiheadAttention(8, 2), ((4, 2, 8),) * 3, {"need_weights": False}),
    (
        "bias_kv_zero_attn",
        lambda m: m.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True),
        ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        {},
    ),
    ("no_bias", lambda m: m.MultiheadAttention(8, 2, bias=False), ((4, 2, 8),) * 3, {}),
    ("unbatched", lambda m: m.MultiheadAttention(8, 2), ((4, 8), (5, 8), (5, 8)), {}),
]


@pytest.mark.parametrize("name, make, shapes, kw", MHA, ids=[c[0] for c in MHA])
def test_mha_matches_torch(name, make, shapes, kw):
    ours, theirs = compare_module(make, *shapes, call=_mha_call(**kw))
    assert repr(ours) == repr(theirs)
    assert state_shapes(ours) == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_masks(need_weights, batch_first):
    rng = np.random.default_rng(0)
    n, lq, lk = 3, 4, 5
    kpm = _bool(rng.random((n, lk)) > 0.7)
    kpm[:, 0] = False  # every query keeps at least one key
    attn = _bool(rng.random((lq, lk)) > 0.8)
    attn[:, 0] = False
    fattn = rng.standard_normal((n * 2, lq, lk))
    q = (n, lq, 8) if batch_first else (lq, n, 8)
    k = (n, lk, 8) if batch_first else (lk, n, 8)

    def make(m):
        return m.MultiheadAttention(8, 2, batch_first=batch_first)

    call = _mha_call(need_weights=need_weights)
    compare_module(make, q, k, k, kpm, attn, call=call)
    compare_module(make, q, k, k, kpm, call=call)
    compare_module(make, q, k, k, None, attn, call=call)
    compare_module(make, q, k, k, None, fattn, call=call)
    compare_module(make, q, k, k, kpm.astype("float64") * -1e9, fattn, call=call)


def test_mha_causal_and_float32():
    torch = pytest.importorskip("torch")
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5).numpy()
    for need in (True, False):
        compare_module(
            lambda m: m.MultiheadAttention(8, 2),
            (5, 2, 8),
            (5, 2, 8),
            (5, 2, 8),
            None,
            causal,
            call=_mha_call(need_weights=need, is_causal=True),
            dtype="float32",
        )


def test_mha_init_and_errors():
    torch = pytest.importorskip("torch")
    ag.manual_seed(0)
    m = nn.MultiheadAttention(16, 4)
    bound = (6 / (48 + 16)) ** 0.5  # xavier_uniform_ over the packed (3E, E) weight
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()
    assert m.in_proj_weight.dtype == ag.float32 and m.head_dim == 4
    for args in [(0, 2), (8, 0)]:
        with pytest.raises(ValueError) as ours:
            nn.MultiheadAttention(*args)
        with pytest.raises(ValueError) as theirs:
            torch.nn.MultiheadAttention(*args)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(8, 3)
    cases = [
        ((5, 2, 8), (5, 8), (5, 8), {}),
        ((5, 2, 8), (5, 2, 8), (5, 2, 8), {"key_padding_mask": np.zeros((2, 5, 1), bool)}),
        ((5, 2, 8), (5, 2, 8), (5, 2, 8), {"attn_mask": np.zeros((4, 5), bool)}),
        ((5, 2, 8), (5, 2, 8), (5, 2, 8), {"attn_mask": np.zeros((3, 5, 5), bool)}),
        ((5, 2, 8), (5, 2, 8), (5, 2, 8), {"key_padding_mask": np.zeros((3, 5), bool)}),
        ((5, 2, 8), (5, 2, 8), (5, 2, 8), {"key_padding_mask": np.zeros((2, 5), np.int64)}),
        ((5, 2, 6), (5, 2, 6), (5, 2, 6), {}),
        ((5, 2, 8), (5, 2, 8), (4, 2, 8), {}),
        ((5, 2, 8), (5, 2, 8), (5, 2, 8), {"is_causal": True}),
        ((2, 5, 2, 8), (5, 2, 8), (5, 2, 8), {}),
    ]
    for q, k, v, kw in cases:
        ta = {n: torch.tensor(a) for n, a in kw.items() if isinstance(a, np.ndarray)}
        aa = {n: ag.tensor(a) for n, a in kw.items() if isinstance(a, np.ndarray)}
        flags = {n: a for n, a in kw.items() if not isinstance(a, np.ndarray)}
        tm, am = torch.nn.MultiheadAttention(8, 2), nn.MultiheadAttention(8, 2)
        with pytest.raises(Exception) as theirs:
            tm(torch.randn(*q), torch.randn(*k), torch.randn(*v), **ta, **flags)
        with pytest.raises(Exception) as ours:
            am(ag.randn(*q), ag.randn(*k), ag.randn(*v), **aa, **flags)
        assert type(ours.value) is type(theirs.value), kw
        assert str(ours.value) == str(theirs.value).replace("torch.", "autogradcli."), kw


def test_mha_mismatched_mask_types_warn():
    torch = pytest.importorskip("torch")
    kpm = np.zeros((2, 5), bool)
    attn = np.zeros((5, 5))
    with pytest.warns(UserWarning) as theirs:
        torch.nn.MultiheadAttention(8, 2)(
            *(torch.randn(5, 2, 8),) * 3,
            key_padding_mask=torch.tensor(kpm),
            attn_mask=torch.tensor(attn, dtype=torch.float32),
        )
    with pytest.warns(UserWarning) as ours:
        nn.MultiheadAttention(8, 2)(
            *(ag.randn(5, 2, 8),) * 3,
            key_padding_mask=ag.tensor(kpm),
            attn_mask=ag.tensor(attn, dtype=ag.float32),
        )
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


# ---- Transformer layers ----------------------------------------------------------------------


def _quiet(make):
    """``make`` with torch's nested-tensor advice silenced (it is checked separately)."""

    def build(m):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return make(m)

    return build


ENCODER_LAYERS = [
    ("post_relu", lambda m: m.TransformerEncoderLayer(8, 2, 16, dropout=0.1)),
    (
        "pre_gelu_bf",
        lambda m: m.TransformerEncoderLayer(
            8, 2, 16, activation="gelu", batch_first=True, norm_first=True
        ),
    ),
    (
        "module_act_nobias",
        lambda m: m.TransformerEncoderLayer(
            8, 4, 12, activation=m.GELU(), bias=False, layer_norm_eps=1e-3
        ),
    ),
    ("callable_act", lambda m: m.TransformerEncoderLayer(8, 2, 16, activation=m.functional.silu)),
]


@pytest.mark.parametrize("name, make", ENCODER_LAYERS, ids=[c[0] for c in ENCODER_LAYERS])
def test_encoder_layer_matches_torch(name, make):
    ours, theirs = compare_module(make, (5, 3, 8))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu


@pytest.mark.filterwarnings("ignore:Support for mismatched")  # bool padding, float attn mask
def test_encoder_layer_masks_and_float32():
    rng = np.random.default_rng(1)
    kpm = rng.random((3, 5)) > 0.7
    kpm[:, 0] = False
    causal = np.triu(np.full((5, 5), -np.inf), 1)

    def call(layer, x, *masks):
        return layer(
            x, src_mask=masks[1] if len(masks) > 1 else None, src_key_padding_mask=masks[0]
        )

    make = lambda m: m.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    compare_module(make, (3, 5, 8), kpm, call=call)
    compare_module(make, (3, 5, 8), kpm, causal, call=call, dtype="float32")
    compare_module(
        make,
        (3, 5, 8),
        None,
        causal,
        call=lambda layer, x, _, m: layer(x, src_mask=m, is_causal=True),
    )


def test_encoder_stack_matches_torch():
    rng = np.random.default_rng(2)
    kpm = rng.random((2, 6)) > 0.7
    kpm[:, 0] = False
    causal = np.triu(np.full((6, 6), -np.inf), 1)

    def make(m):
        layer = m.TransformerEncoderLayer(8, 2, 16, norm_first=True)
        return m.TransformerEncoder(layer, 2, norm=m.LayerNorm(8), enable_nested_tensor=False)

    ours, theirs = compare_module(
        make, (6, 2, 8), None, causal, call=lambda e, x, k, m: e(x, mask=m)
    )
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    compare_module(make, (6, 2, 8), kpm, call=lambda e, x, k: e(x, src_key_padding_mask=k))
    # the layers are independent copies
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight


def test_encoder_nested_tensor_warning_matches_torch():
    torch = pytest.importorskip("torch")
    for kw in [{}, {"batch_first": True, "norm_first": True}, {"batch_first": True}]:
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, **kw), 1)
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, **kw), 1)
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


DECODER_LAYERS = [
    ("post", lambda m: m.TransformerDecoderLayer(8, 2, 16)),
    (
        "pre_gelu_bf",
        lambda m: m.TransformerDecoderLayer(
            8, 2, 16, activation="gelu", norm_first=True, batch_first=True
        ),
    ),
]


@pytest.mark.parametrize("name, make", DECODER_LAYERS, ids=[c[0] for c in DECODER_LAYERS])
def test_decoder_layer_matches_torch(name, make):
    rng = np.random.default_rng(4)
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    mkpm = rng.random((3, 6)) > 0.7
    mkpm[:, 0] = False
    bf = "bf" in name
    tgt, mem = ((3, 4, 8), (3, 6, 8)) if bf else ((4, 3, 8), (6, 3, 8))

    def call(layer, t, m, mask, kpm):
        return layer(t, m, tgt_mask=mask, memory_key_padding_mask=kpm)

    ours, theirs = compare_module(make, tgt, mem, causal, mkpm, call=call)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_transformer_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    skpm = rng.random((2, 5)) > 0.7
    skpm[:, 0] = False
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4).numpy().astype("float64")

    def make(m):
        return m.Transformer(8, 2, 2, 2, 16, dropout=0.2, batch_first=True)

    def call(model, src, tgt, mask, kpm):
        return model(src, tgt, tgt_mask=mask, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)

    ours, theirs = compare_module(_quiet(make), (2, 5, 8), (2, 4, 8), tmask, skpm, call=call)
    assert repr(ours) == repr(theirs)
    assert state_shapes(ours) == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # float32, sequence-first, norm_first, gelu
    compare_module(
        _quiet(lambda m: m.Transformer(8, 2, 1, 1, 16, activation="gelu", norm_first=True)),
        (5, 2, 8),
        (4, 2, 8),
        call=lambda model, s, t: model(s, t),
        dtype="float32",
    )


def test_transformer_defaults_masks_and_errors():
    torch = pytest.importorskip("torch")
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    ref = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(mask.numpy(), ref.numpy())
    assert mask.dtype == ag.float32
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=ag.float64).dtype == ag.float64
    ag.manual_seed(0)
    model = _quiet(lambda m: m.Transformer(16, 2, 1, 1, 32))(nn)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = (6 / (16 + 32)) ** 0.5  # xavier_uniform_ on every matrix
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    layer = nn.TransformerEncoderLayer(8, 2)
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1
    assert layer.self_attn.batch_first is False and layer.norm_first is False
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    for src, tgt in [((5, 2, 8), (4, 3, 8)), ((5, 2, 6), (4, 2, 6))]:
        with pytest.raises(RuntimeError) as ours:
            model8 = _quiet(lambda m: m.Transformer(8, 2, 1, 1, 16))
            model8(nn)(ag.randn(*src), ag.randn(*tgt))
        with pytest.raises(RuntimeError) as theirs:
            model8(torch.nn)(torch.randn(*src), torch.randn(*tgt))
        assert str(ours.value) == str(theirs.value)


def test_transformer_trains_on_strict_device(strict_cuda):
    ag.manual_seed(0)
    model = _quiet(lambda m: m.Transformer(8, 2, 1, 1, 16, batch_first=True))(nn).to("cuda")
    src, tgt = ag.randn(2, 5, 8, device="cuda"), ag.randn(2, 4, 8, device="cuda")
    mask = nn.Transformer.generate_square_subsequent_mask(4, device="cuda")
    out = model(src, tgt, tgt_mask=mask)
    out.pow(2).mean().backward()
    assert out.device.type == "cuda"
    assert all(p.grad is not None and p.grad.device.type == "cuda" for p in model.parameters())


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_encoder_inference_zeroes_padded_positions_as_torch():
    torch = pytest.importorskip("torch")
    kpm = np.array([[False, False, True, True], [False, False, False, False]])
    x = np.random.default_rng(7).standard_normal((2, 4, 8)).astype("float32")
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    te = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8)).eval()
    with torch.no_grad():
        te.norm.bias.fill_(0.5)  # shows where the norm is applied: after the zeroing
    ae = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, norm=nn.LayerNorm(8)
    ).eval()
    from module_oracle import load_torch_state

    load_torch_state(ae, te)
    unaligned = np.array([[False, True, False, True], [False] * 4])
    for padding, zeroed in ((kpm, True), (unaligned, False)):
        with torch.no_grad():
            ref = te(torch.tensor(x), src_key_padding_mask=torch.tensor(padding)).numpy()
        with ag.no_grad():
            out = ae(ag.tensor(x), src_key_padding_mask=ag.tensor(padding)).numpy()
        np.testing.assert_allclose(out, ref, atol=2e-5)
        # torch's nested path: padded rows are norm(0) = its bias
        assert np.allclose(ref[0, padding[0]], 0.5) == zeroed
    # with gradients enabled torch computes the padded rows: so do we
    ref = te(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)).detach().numpy()
    out = ae(ag.tensor(x), src_key_padding_mask=ag.tensor(kpm)).detach().numpy()
    np.testing.assert_allclose(out, ref, atol=2e-5)
    assert not np.allclose(ref[0, 2:], 0.5)


def test_dropout_active_in_training_only():
    ag.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = ag.randn(5, 2, 8)
    a, b = layer(x), layer(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())  # fresh masks each call
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())
    mha = nn.MultiheadAttention(8, 2, dropout=0.5)
    _, w = mha(x, x, x, average_attn_weights=False)
    w = w.detach().numpy()
    # dropped weights are zeros, kept ones doubled: rows no longer sum to one
    assert (w == 0).any() and not np.allclose(w.sum(-1), 1.0)
    mha.eval()
    _, w = mha(x, x, x)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, rtol=1e-5)
