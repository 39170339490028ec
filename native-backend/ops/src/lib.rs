//! The op table: every tensor op torchlower claims, declared once.
//!
//! Both sides of the product read this table. The analyzer (`torchlower-analyzer`) dispatches
//! a torch site to its claim lane by the Python spellings here, keeps an [`Op`] in its IR,
//! prints the backend function [`OpInfo::name`] in the emitted Rust and documents every op in
//! the generated `docs/rules.md`. The backend (`torchlower-backend`) uses [`Unary`] and
//! [`Binary`] as the element ops of its fused CPU kernels and of its CUDA kernels, and names
//! each CUDA kernel from [`OpInfo::cuda_kernel`].
//!
//! Adding an op is: one row below, its claim logic (`analyzer-wasm/src/claim/<lane>.rs`), its
//! rule in the registry (`analyzer-wasm/src/rules.rs`), its backend function
//! (`native-backend/src/ops.rs`, and `cuda/ops.rs` with a kernel) and its tests. The matches
//! over [`Op`], [`Unary`] and [`Binary`] in both crates are exhaustive, so a row without a
//! backend function or kernel does not compile, and the table tests (here, in the analyzer's
//! `tests/op_table.rs` and in the backend) fail when a row lacks a spelling, a rule or a claim.
//! The worked example is in `docs/architecture.md`.
//!
//! Long on purpose: the table is one list that grows by one row per op, and splitting it
//! would bring back the parallel lists it replaces.

/// The `cuda_kernel` of a view op on cuda:0: metadata only (libtorch's view functions, which
/// launch nothing), no kernel.
pub const CUDA_VIEW: &str = "(view, no kernel)";

/// The exponents of `t ** e` lowered on cuda:0: eager's CUDA kernel special-cases them
/// (`x*x`, `x*x*x`, `sqrt`, `1/x`, `1/(x*x)`, a copy), so our kernels reproduce it bit for
/// bit; its general `powf` is not correctly rounded and stays eager's.
pub const CUDA_POW_EXPONENTS: [f64; 6] = [2.0, 3.0, 0.5, -1.0, -2.0, 1.0];

/// Which claim module owns an op (`analyzer-wasm/src/claim/<lane>.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    Linear,
    Activations,
    Unary,
    Gelu,
    Binops,
    Reductions,
    Classification,
    Views,
    Pointwise,
    Norms,
    Vision,
    Embedding,
    Masking,
    Creation,
    Attention,
    Distributions,
}

impl Lane {
    /// Every lane, in documentation order.
    pub const ALL: [Lane; 16] = [
        Lane::Linear,
        Lane::Activations,
        Lane::Unary,
        Lane::Gelu,
        Lane::Binops,
        Lane::Reductions,
        Lane::Classification,
        Lane::Views,
        Lane::Pointwise,
        Lane::Norms,
        Lane::Vision,
        Lane::Embedding,
        Lane::Masking,
        Lane::Creation,
        Lane::Attention,
        Lane::Distributions,
    ];

    /// Heading of the lane in the docs.
    pub const fn title(self) -> &'static str {
        match self {
            Lane::Linear => "linear",
            Lane::Activations => "activations",
            Lane::Unary => "unary math",
            Lane::Gelu => "GELU",
            Lane::Binops => "binary operations and matmul",
            Lane::Reductions => "reductions",
            Lane::Classification => "classification",
            Lane::Views => "views and reshapes",
            Lane::Pointwise => "pointwise with Python numbers",
            Lane::Norms => "normalization",
            Lane::Vision => "convolution, pooling and padding",
            Lane::Embedding => "embedding",
            Lane::Masking => "comparisons and masking",
            Lane::Creation => "tensor creation",
            Lane::Attention => "attention",
            Lane::Distributions => "probability distributions",
        }
    }

    /// The identifier used in the registry JSON (`"binops"`).
    pub const fn id(self) -> &'static str {
        match self {
            Lane::Linear => "linear",
            Lane::Activations => "activations",
            Lane::Unary => "unary",
            Lane::Gelu => "gelu",
            Lane::Binops => "binops",
            Lane::Reductions => "reductions",
            Lane::Classification => "classification",
            Lane::Views => "views",
            Lane::Pointwise => "pointwise",
            Lane::Norms => "norms",
            Lane::Vision => "vision",
            Lane::Embedding => "embedding",
            Lane::Masking => "masking",
            Lane::Creation => "creation",
            Lane::Attention => "attention",
            Lane::Distributions => "distributions",
        }
    }
}

/// The operands and static options of an op's backend function, which fixes how the emitted
/// Rust calls it (`native-backend/API.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signature {
    /// `f(&t)`: one tensor, elementwise.
    Unary,
    /// `f(&a, &b)`: two tensors, elementwise with broadcasting.
    Binary,
    /// `f(&a, &b)`: two tensors, not one of the fused elementwise ops (`matmul`, `maximum`).
    Product,
    /// `f(&x, &w, Option<&b>)`.
    Linear,
    /// `f(&t, dim, keepdim)`: a reduction over one static dim.
    DimKeepdim,
    /// `f(&t, dim)`.
    Dim,
    /// `f(&t)`: one tensor, not elementwise (`contiguous`).
    Tensor,
    /// `f(&t, &[i64; n])`: a shape or a permutation, from Python ints.
    IntList,
    /// `f(&t, d0, d1)`: two static dims (`transpose`, `flatten`).
    DimPair,
    /// `t[items]`: basic indexing (`tl::index::get(&t, &[Item, …])`).
    Index,
    /// `f(&t, s)`: a tensor and a Python number (`pow(t, 2)`, `clamp_min(t, 0.0)`).
    TensorNumber,
    /// `f(&t, Option<Scalar>, Option<Scalar>)`: `clamp(t, min, max)`.
    Clamp,
    /// `f(&[&a, &b, …], dim)`: a list of tensors joined along a static dim (`einsum`: `f(equation,
    /// &[&a, &b, …])`).
    TensorList,
    /// `f(&x, &[shape], Option<&w>, Option<&b>, eps)`: `layer_norm`.
    LayerNorm,
    /// `f(&t, a, dim, n)`: a tensor split into parts that a statement unpacks into `n` names
    /// (`a, b = t.chunk(2, dim)`); `a` is the op's int argument (unused by `unbind`).
    Parts,
    /// `f(…)`: the parameters of the op's Python signature, in order ([`Param`]); the
    /// analyzer binds positional and keyword arguments to them as Python does.
    Params(&'static [Param]),
}

/// One parameter of an op claimed through its Python signature ([`Signature::Params`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Param {
    /// The Python name (keyword arguments bind by it).
    pub name: &'static str,
    pub kind: Kind,
    /// The Rust argument printed when the parameter is omitted (or given `None` where that is
    /// its default); `None`: the parameter is required, unless its kind has its own default
    /// (`OptTensor`: `None`; `Choice`: the first string; `Fixed`: its literal).
    pub default: Option<&'static str>,
    /// Python declares no default, whatever the kind: a call without it is eager's TypeError
    /// (`F.multi_head_attention_forward`'s `bias_k`, a `Fixed("None")` that must be passed).
    pub required: bool,
}

/// What a [`Param`] accepts and how the backend function takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A float32 tensor (`&Tensor`); every tensor of a call lives on one device.
    Tensor,
    /// A tensor of any dtype (`&Tensor`): the views move no values.
    AnyTensor,
    /// A float32 tensor or `None` (`Option<&Tensor>`).
    OptTensor,
    /// A tensor of any dtype or `None` (`Option<&Tensor>`): a bool or additive mask.
    OptAnyTensor,
    /// An int64 tensor of indices (`&Tensor`).
    Indices,
    /// A bool tensor (`&Tensor`): a mask or a condition.
    Mask,
    /// A float32 or int64 tensor or a Python number (`tl::ops::Value`).
    TensorOrNumber,
    /// A tensor of any dtype or a Python number (`tl::ops::Value`): `scatter`'s source, whose
    /// number libtorch converts to the input's dtype.
    AnyTensorOrNumber,
    /// A Python int (`i64`).
    Int,
    /// A Python float or int (`f64`, as CPython converts an int).
    Float,
    /// A Python float or int, or `None` (`Option<f64>`).
    OptFloat,
    /// A Python bool (`bool`).
    Bool,
    /// A Python bool or `None` (`Option<bool>`).
    OptBool,
    /// A Python int or `None` (`Option<i64>`).
    OptInt,
    /// A Python int or a tuple/list of ints (`&[i64]`); a lone int stands for `n` copies of
    /// itself when `n > 0` (eager's `_pair`), for itself when `n == 0`.
    Ints(u8),
    /// A tuple or list of Python ints (`&[i64]`) where eager's signature takes only a sequence:
    /// a lone int is eager's TypeError (`F.pad(x, 1)`, `F.rms_norm(x, 4)`), so it is not claimed.
    IntSeq,
    /// As [`Kind::Ints`], or `None` for the default (printed as `Option<&[i64]>` when the
    /// default is `"None"`, else as `&[i64]`).
    OptInts(u8),
    /// A string literal from this list (`&str`); omitted, the first. A dtype (`torch.float32`)
    /// and `None` match their names.
    Choice(&'static [&'static str]),
    /// Accepted only as this Python literal (eager's default: `False`, `None`, `1.0`) and not
    /// passed: the options that change what the op is (training mode, `inplace`, indices).
    Fixed(&'static str),
}

/// A [`Param`] (for the tables below).
const fn p(name: &'static str, kind: Kind, default: Option<&'static str>) -> Param {
    Param { name, kind, default, required: false }
}

/// A [`Param`] without a Python default (a call must pass it), of a kind that has a Rust one.
const fn required(name: &'static str, kind: Kind) -> Param {
    Param { name, kind, default: None, required: true }
}

const INPLACE: Param = p("inplace", Kind::Fixed("False"), None);

/// `(input, inplace=False)`: an activation with no options.
const ACTIVATION: &[Param] = &[p("input", Kind::Tensor, None), INPLACE];
const LEAKY_RELU: &[Param] = &[p("input", Kind::Tensor, None), p("negative_slope", Kind::Float, Some("0.01f64")), INPLACE];
const ELU: &[Param] = &[p("input", Kind::Tensor, None), p("alpha", Kind::Fixed("1.0"), None), INPLACE];
const HARDTANH: &[Param] =
    &[p("input", Kind::Tensor, None), p("min_val", Kind::Float, Some("-1.0f64")), p("max_val", Kind::Float, Some("1.0f64")), INPLACE];
const SOFTPLUS: &[Param] = &[p("input", Kind::Tensor, None), p("beta", Kind::Fixed("1"), None), p("threshold", Kind::Fixed("20"), None)];
/// `(input)`, for the `torch.` and method spellings of plain math.
const INPUT: &[Param] = &[p("input", Kind::Tensor, None)];
/// `torch.linspace(start, end, steps)` of Python numbers (the lane reads `dtype` and `device`).
const LINSPACE: &[Param] = &[p("start", Kind::Float, None), p("end", Kind::Float, None), p("steps", Kind::Int, None)];
const OUTER: &[Param] = &[p("input", Kind::AnyTensor, None), p("vec2", Kind::AnyTensor, None)];

const fn conv(spatial: u8) -> [Param; 7] {
    [
        p("input", Kind::Tensor, None),
        p("weight", Kind::Tensor, None),
        p("bias", Kind::OptTensor, None),
        p("stride", Kind::Ints(spatial), Some("&[1]")),
        p("padding", Kind::Ints(spatial), Some("&[0]")),
        p("dilation", Kind::Ints(spatial), Some("&[1]")),
        p("groups", Kind::Int, Some("1i64")),
    ]
}
const CONV1D: &[Param] = &conv(1);
const CONV2D: &[Param] = &conv(2);
/// A convolution with `padding="same"` or `"valid"` (claimed through `conv1d`/`conv2d`).
const fn conv_padding(spatial: u8) -> [Param; 7] {
    [
        p("input", Kind::Tensor, None),
        p("weight", Kind::Tensor, None),
        p("bias", Kind::OptTensor, None),
        p("stride", Kind::Ints(spatial), Some("&[1]")),
        p("padding", Kind::Choice(&["valid", "same"]), None),
        p("dilation", Kind::Ints(spatial), Some("&[1]")),
        p("groups", Kind::Int, Some("1i64")),
    ]
}
const CONV1D_PADDING: &[Param] = &conv_padding(1);
const CONV2D_PADDING: &[Param] = &conv_padding(2);
const CONV_TRANSPOSE1D: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("weight", Kind::Tensor, None),
    p("bias", Kind::OptTensor, None),
    p("stride", Kind::Ints(1), Some("&[1]")),
    p("padding", Kind::Ints(1), Some("&[0]")),
    p("output_padding", Kind::Ints(1), Some("&[0]")),
    p("groups", Kind::Int, Some("1i64")),
    p("dilation", Kind::Ints(1), Some("&[1]")),
];
const CONV_TRANSPOSE2D: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("weight", Kind::Tensor, None),
    p("bias", Kind::OptTensor, None),
    p("stride", Kind::Ints(2), Some("&[1]")),
    p("padding", Kind::Ints(2), Some("&[0]")),
    p("output_padding", Kind::Ints(2), Some("&[0]")),
    p("groups", Kind::Int, Some("1i64")),
    p("dilation", Kind::Ints(2), Some("&[1]")),
];
const ADDMM: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("mat1", Kind::Tensor, None),
    p("mat2", Kind::Tensor, None),
    p("beta", Kind::Fixed("1"), None),
    p("alpha", Kind::Fixed("1"), None),
];
const BADDBMM: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("batch1", Kind::Tensor, None),
    p("batch2", Kind::Tensor, None),
    p("beta", Kind::Float, Some("1.0f64")),
    p("alpha", Kind::Float, Some("1.0f64")),
];
const INTERPOLATE: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("size", Kind::OptInts(0), Some("None")),
    p("scale_factor", Kind::OptFloat, Some("None")),
    p("mode", Kind::Choice(&["nearest", "bilinear", "linear", "bicubic"]), None),
    p("align_corners", Kind::OptBool, Some("None")),
    p("recompute_scale_factor", Kind::Fixed("None"), None),
    p("antialias", Kind::Fixed("False"), None),
];

const fn max_pool(spatial: u8) -> [Param; 7] {
    [
        p("input", Kind::Tensor, None),
        p("kernel_size", Kind::Ints(spatial), None),
        p("stride", Kind::OptInts(spatial), Some("&[]")),
        p("padding", Kind::Ints(spatial), Some("&[0]")),
        p("dilation", Kind::Ints(spatial), Some("&[1]")),
        p("ceil_mode", Kind::Bool, Some("false")),
        p("return_indices", Kind::Fixed("False"), None),
    ]
}
const MAX_POOL1D: &[Param] = &max_pool(1);
const MAX_POOL2D: &[Param] = &max_pool(2);
const AVG_POOL1D: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("kernel_size", Kind::Ints(1), None),
    p("stride", Kind::OptInts(1), Some("&[]")),
    p("padding", Kind::Ints(1), Some("&[0]")),
    p("ceil_mode", Kind::Bool, Some("false")),
    p("count_include_pad", Kind::Bool, Some("true")),
];
const AVG_POOL2D: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("kernel_size", Kind::Ints(2), None),
    p("stride", Kind::OptInts(2), Some("&[]")),
    p("padding", Kind::Ints(2), Some("&[0]")),
    p("ceil_mode", Kind::Bool, Some("false")),
    p("count_include_pad", Kind::Bool, Some("true")),
    p("divisor_override", Kind::Fixed("None"), None),
];
const ADAPTIVE_POOL1D: &[Param] = &[p("input", Kind::Tensor, None), p("output_size", Kind::Ints(1), None)];
const ADAPTIVE_POOL2D: &[Param] = &[p("input", Kind::Tensor, None), p("output_size", Kind::Ints(2), None)];
const ADAPTIVE_MAX_POOL2D: &[Param] =
    &[p("input", Kind::Tensor, None), p("output_size", Kind::Ints(2), None), p("return_indices", Kind::Fixed("False"), None)];
const PAD: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("pad", Kind::IntSeq, None),
    p("mode", Kind::Choice(&["constant", "reflect", "replicate", "circular"]), None),
    p("value", Kind::OptFloat, Some("None")),
];
/// `torch.arange(end)` / `(start, end, step=1)`: the lane binds the overloads itself.
const ARANGE: &[Param] = &[
    p("start", Kind::Int, Some("0i64")),
    p("end", Kind::Int, None),
    p("step", Kind::Int, Some("1i64")),
    p("dtype", Kind::Choice(&["torch.int64", "torch.float32", "torch.int32"]), None),
];
const NARROW: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("start", Kind::Int, None), p("length", Kind::Int, None)];
const SELECT: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("index", Kind::Int, None)];
const UNFLATTEN: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("sizes", Kind::Ints(0), None)];
const SQUEEZE: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None)];
const DETACH: &[Param] = &[p("input", Kind::AnyTensor, None)];
/// `t.clone(*, memory_format=torch.preserve_format)`: the preserved format only.
const CLONE: &[Param] = &[p("input", Kind::AnyTensor, None), p("memory_format", Kind::Fixed("torch.preserve_format"), None)];
/// `torch.roll(input, shifts, dims=None)`: `shifts` an int or a tuple; without `dims` the
/// flattened tensor rolls.
const ROLL: &[Param] = &[p("input", Kind::AnyTensor, None), p("shifts", Kind::Ints(0), None), p("dims", Kind::OptInts(0), Some("&[]"))];
/// `torch.div(input, other, rounding_mode=…)` with a rounding mode (`a // b` is `"floor"`): the
/// lane binds `torch.div`'s and `floor_divide`'s spellings itself.
const REMAINDER: &[Param] = &[p("input", Kind::AnyTensor, None), p("other", Kind::TensorOrNumber, None)];
const DIV_MODE: &[Param] = &[p("input", Kind::AnyTensor, None), p("other", Kind::TensorOrNumber, None), p("rounding_mode", Kind::Choice(&["floor", "trunc"]), None)];
/// `t.unfold(dimension, size, step)`: the sliding windows along one dim as a new last dim.
const UNFOLD: &[Param] = &[p("input", Kind::AnyTensor, None), p("dimension", Kind::Int, None), p("size", Kind::Int, None), p("step", Kind::Int, None)];
/// `torch.flip(input, dims)`: `dims` a tuple or list of ints (the method's `t.flip(0, 1)` ints
/// are packed by the walk; a lone int elsewhere is eager's TypeError).
const FLIP: &[Param] = &[p("input", Kind::AnyTensor, None), p("dims", Kind::IntSeq, None)];
/// `torch.repeat_interleave(input, repeats, dim=None, *, output_size=None)` with a Python-int
/// `repeats`; the lane takes `dim` as one int (a tuple is eager's TypeError).
const REPEAT_INTERLEAVE: &[Param] =
    &[p("input", Kind::AnyTensor, None), p("repeats", Kind::Int, None), p("dim", Kind::OptInts(0), Some("None")), p("output_size", Kind::Fixed("None"), None)];
/// `torch.tensordot(a, b, dims)` with `dims` split by the walk into the two lists of
/// contracted dims (`dims=2`: the last two of `a`, the first two of `b`).
const TENSORDOT: &[Param] = &[p("a", Kind::Tensor, None), p("b", Kind::Tensor, None), p("dims_a", Kind::IntSeq, None), p("dims_b", Kind::IntSeq, None)];
/// `F.dropout(input, p=0.5, training=True, inplace=False)`: the lane claims `training=False`
/// only (the default trains).
const DROPOUT: &[Param] = &[p("input", Kind::AnyTensor, None), p("p", Kind::Float, Some("0.5f64")), p("training", Kind::Bool, Some("true")), INPLACE];
/// `t.repeat(*sizes)`: the walk packs the sizes into one tuple.
const REPEAT: &[Param] = &[p("input", Kind::AnyTensor, None), p("repeats", Kind::Ints(0), None)];
/// `t.to(dtype)` & co. between the dtypes of the vocabulary (claimed by the walk's conversions).
const TO_DTYPE: &[Param] = &[p("input", Kind::AnyTensor, None), p("dtype", DTYPES, None)];
const NORM: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("p", Kind::OptFloat, Some("None")),
    p("dim", Kind::Ints(0), None),
    p("keepdim", Kind::Bool, Some("false")),
    p("dtype", Kind::Fixed("None"), None),
];
const VECTOR_NORM: &[Param] = &[
    p("x", Kind::Tensor, None),
    p("ord", Kind::Float, Some("2.0f64")),
    p("dim", Kind::Ints(0), None),
    p("keepdim", Kind::Bool, Some("false")),
    p("dtype", Kind::Fixed("None"), None),
];
const NORMALIZE: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("p", Kind::Float, Some("2.0f64")),
    p("dim", Kind::Int, Some("1i64")),
    p("eps", Kind::Float, Some("1e-12f64")),
    p("out", Kind::Fixed("None"), None),
];
const DTYPES: Kind = Kind::Choice(&["torch.float32", "torch.int64", "torch.bool", "torch.int32"]);
/// `torch.zeros(*size)` / `ones`: the walk packs the sizes into one tuple; the lane reads
/// `dtype` and `device`.
const SIZED: &[Param] = &[p("size", Kind::Ints(0), None), p("dtype", DTYPES, None)];
const FULL: &[Param] = &[p("size", Kind::Ints(0), None), p("fill_value", Kind::TensorOrNumber, None), p("dtype", DTYPES, None)];
/// `torch.tensor(data, dtype=None)` of a Python number (the walk checks `device` and
/// `requires_grad`).
const SCALAR_TENSOR: &[Param] = &[p("data", Kind::TensorOrNumber, None), p("dtype", DTYPES, None)];
const LIKE: &[Param] = &[p("input", Kind::AnyTensor, None)];
const FULL_LIKE: &[Param] = &[p("input", Kind::AnyTensor, None), p("fill_value", Kind::TensorOrNumber, None)];
const fn reduce(dim_required: bool) -> [Param; 3] {
    [p("input", Kind::Tensor, None), p("dim", Kind::Ints(0), if dim_required { None } else { Some("&[]") }), p("keepdim", Kind::Bool, Some("false"))]
}
const REDUCE: &[Param] = &reduce(true);
const REDUCE_ANY: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Ints(0), None), p("keepdim", Kind::Bool, Some("false"))];
/// `t.sum(dim, keepdim=False, *, dtype=None)` / `t.mean(…)` with `dim` a tuple or list of ints.
const SUM_MEAN_DIMS: &[Param] = &[p("input", Kind::Tensor, None), p("dim", Kind::Ints(0), None), p("keepdim", Kind::Bool, Some("false")), p("dtype", Kind::Fixed("None"), None)];
/// `t.sum(dim, keepdim=False, *, dtype=None)` over a tuple of dims, or of a bool or int64
/// tensor over any dims (an int64 result, as eager's).
const SUM_DIMS: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Ints(0), None), p("keepdim", Kind::Bool, Some("false")), p("dtype", Kind::Fixed("None"), None)];
const ONE_DIM_REDUCE: &[Param] = &[p("input", Kind::Tensor, None), p("dim", Kind::Int, None), p("keepdim", Kind::Bool, Some("false")), p("dtype", Kind::Fixed("None"), None)];
/// `t.max(dim, keepdim=False)`: the (values, indices) pair.
const EXTREMUM: &[Param] = &[p("input", Kind::Tensor, None), p("dim", Kind::Int, None), p("keepdim", Kind::Bool, Some("false"))];
const TOPK: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("k", Kind::Int, None),
    p("dim", Kind::Int, Some("-1i64")),
    p("largest", Kind::Bool, Some("true")),
    p("sorted", Kind::Bool, Some("true")),
];
/// A reduction over every element (`x.sum()`, `torch.max(x)`, `x.argmax()`): a rank-0 result.
const WHOLE: &[Param] = &[p("input", Kind::AnyTensor, None)];
/// `x.std()` / `x.var(unbiased=False)` over every element.
const WHOLE_MOMENT: &[Param] = &[p("input", Kind::Tensor, None), p("unbiased", Kind::Bool, Some("true"))];
const ARGMIN: &[Param] = &[p("input", Kind::Tensor, None), p("dim", Kind::Int, None), p("keepdim", Kind::Bool, Some("false"))];
const MOMENT: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("dim", Kind::Ints(0), None),
    p("unbiased", Kind::Bool, Some("true")),
    p("keepdim", Kind::Bool, Some("false")),
    p("correction", Kind::OptFloat, Some("None")),
];
/// `F.log_softmax(input, dim=None, _stacklevel=3, dtype=None)`: without a dim, eager's implicit
/// one (pyGAT's `F.log_softmax(x)`); `torch.log_softmax` and the method need it (their lane).
const LOG_SOFTMAX: &[Param] = &[p("input", Kind::Tensor, None), p("dim", Kind::OptInt, Some("None")), p("_stacklevel", Kind::Int, Some("3i64")), p("dtype", Kind::Fixed("None"), None)];
const GLU: &[Param] = &[p("input", Kind::Tensor, None), p("dim", Kind::Int, Some("-1i64"))];
const TRIANGLE: &[Param] = &[p("input", Kind::AnyTensor, None), p("diagonal", Kind::Int, Some("0i64"))];
const GATHER: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("index", Kind::Indices, None), p("sparse_grad", Kind::Fixed("False"), None)];
/// `t.scatter(dim, index, src)`: `src` a tensor of the input's dtype or, positionally, a Python
/// number (eager's `value` overload: TD-MPC2's `one_hot.scatter_(-1, x.unsqueeze(-1), 1)`); the
/// `reduce` forms stay Python.
const SCATTER: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("index", Kind::Indices, None), p("src", Kind::AnyTensorOrNumber, None)];
/// `torch.isin(elements, test_elements, *, assume_unique=False, invert=False)`.
const ISIN: &[Param] = &[
    p("elements", Kind::AnyTensor, None),
    p("test_elements", Kind::AnyTensor, None),
    p("assume_unique", Kind::Bool, Some("false")),
    p("invert", Kind::Bool, Some("false")),
];
/// `torch.meshgrid(a, b, indexing="ij")`: two rank-1 tensors (the pair of grids).
const MESHGRID: &[Param] = &[p("a", Kind::AnyTensor, None), p("b", Kind::AnyTensor, None), p("indexing", Kind::Choice(&["ij", "xy"]), None)];
/// `torch.sort(input, dim=-1, descending=False)` (the `stable` keyword stays Python).
const SORT: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, Some("-1i64")), p("descending", Kind::Bool, Some("false"))];
/// `torch.cumsum(input, dim, *, dtype=None)`.
/// `torch.cumsum(input, dim, *, dtype=None)`: DETR's `not_mask.cumsum(1, dtype=torch.float32)`.
const CUMSUM: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("dtype", Kind::Choice(&["None", "torch.float32", "torch.int64"]), None)];
const INDEX_SELECT: &[Param] = &[p("input", Kind::AnyTensor, None), p("dim", Kind::Int, None), p("index", Kind::Indices, None)];
const ONE_HOT: &[Param] = &[p("input", Kind::Indices, None), p("num_classes", Kind::Int, Some("-1i64"))];
const RMS_NORM: &[Param] = &[p("input", Kind::Tensor, None), p("normalized_shape", Kind::IntSeq, None), p("weight", Kind::OptTensor, None), p("eps", Kind::OptFloat, Some("None"))];
const SDPA: &[Param] = &[
    p("query", Kind::Tensor, None),
    p("key", Kind::Tensor, None),
    p("value", Kind::Tensor, None),
    p("attn_mask", Kind::OptAnyTensor, None),
    p("dropout_p", Kind::Fixed("0.0"), None),
    p("is_causal", Kind::Bool, Some("false")),
    p("scale", Kind::OptFloat, Some("None")),
    p("enable_gqa", Kind::Bool, Some("false")),
];
/// `F.multi_head_attention_forward` in eager's parameter order; the options the inference form
/// fixes are `Fixed`, and the attention lane checks the ones that must be given (`bias_k`, …).
const MHA: &[Param] = &[
    p("query", Kind::Tensor, None),
    p("key", Kind::Tensor, None),
    p("value", Kind::Tensor, None),
    p("embed_dim_to_check", Kind::Int, None),
    p("num_heads", Kind::Int, None),
    required("in_proj_weight", Kind::OptTensor),
    required("in_proj_bias", Kind::OptTensor),
    required("bias_k", Kind::Fixed("None")),
    required("bias_v", Kind::Fixed("None")),
    required("add_zero_attn", Kind::Fixed("False")),
    p("dropout_p", Kind::Float, None),
    p("out_proj_weight", Kind::Tensor, None),
    required("out_proj_bias", Kind::OptTensor),
    p("training", Kind::Bool, Some("true")),
    p("key_padding_mask", Kind::Fixed("None"), None),
    p("need_weights", Kind::Bool, Some("true")),
    p("attn_mask", Kind::OptAnyTensor, None),
    p("use_separate_proj_weight", Kind::Bool, Some("false")),
    p("q_proj_weight", Kind::OptTensor, None),
    p("k_proj_weight", Kind::OptTensor, None),
    p("v_proj_weight", Kind::OptTensor, None),
    p("static_k", Kind::Fixed("None"), None),
    p("static_v", Kind::Fixed("None"), None),
    p("average_attn_weights", Kind::Bool, Some("true")),
    p("is_causal", Kind::Bool, Some("false")),
];
const CATEGORICAL: &[Param] = &[p("probs", Kind::Fixed("None"), None), p("logits", Kind::Tensor, None), p("validate_args", Kind::Fixed("None"), None)];
const NORMAL: &[Param] = &[p("loc", Kind::Tensor, None), p("scale", Kind::Tensor, None), p("validate_args", Kind::Fixed("None"), None)];
/// The methods of a distribution: its stored tensors, then the value (claimed through the
/// distribution's methods, see [`CLAIMED_THROUGH`]).
const LOGITS: &[Param] = &[p("logits", Kind::Tensor, None)];
const LOGITS_VALUE: &[Param] = &[p("logits", Kind::Tensor, None), p("value", Kind::Indices, None)];
const LOC_SCALE: &[Param] = &[p("loc", Kind::Tensor, None), p("scale", Kind::Tensor, None)];
const LOC_SCALE_VALUE: &[Param] = &[p("loc", Kind::Tensor, None), p("scale", Kind::Tensor, None), p("value", Kind::Tensor, None)];
const POW_TENSOR: &[Param] = &[p("input", Kind::TensorOrNumber, None), p("exponent", Kind::Tensor, None)];
const CLAMP_TENSOR: &[Param] = &[p("input", Kind::Tensor, None), p("min", Kind::OptTensor, None), p("max", Kind::OptTensor, None)];
const MASKED_FILL: &[Param] = &[p("input", Kind::Tensor, None), p("mask", Kind::Mask, None), p("value", Kind::Float, None)];
const WHERE: &[Param] = &[p("condition", Kind::Mask, None), p("input", Kind::TensorOrNumber, None), p("other", Kind::TensorOrNumber, None)];
const WHERE_NONZERO: &[Param] = &[p("condition", Kind::AnyTensor, None)];
const TENSOR_OF_INTS: &[Param] = &[p("data", Kind::IntSeq, None)];
const MULTINOMIAL: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("num_samples", Kind::Int, None),
    p("replacement", Kind::Bool, Some("false")),
    p("generator", Kind::Fixed("None"), None),
];
const BATCH_NORM: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("running_mean", Kind::Tensor, None),
    p("running_var", Kind::Tensor, None),
    p("weight", Kind::OptTensor, None),
    p("bias", Kind::OptTensor, None),
    p("training", Kind::Fixed("False"), None),
    p("momentum", Kind::Float, Some("0.1f64")),
    p("eps", Kind::Float, Some("1e-5f64")),
];
const GROUP_NORM: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("num_groups", Kind::Int, None),
    p("weight", Kind::OptTensor, None),
    p("bias", Kind::OptTensor, None),
    p("eps", Kind::Float, Some("1e-5f64")),
];
const EMBEDDING: &[Param] = &[
    p("input", Kind::Indices, None),
    p("weight", Kind::Tensor, None),
    p("padding_idx", Kind::Fixed("None"), None),
    p("max_norm", Kind::Fixed("None"), None),
    p("norm_type", Kind::Float, Some("2.0f64")),
    p("scale_grad_by_freq", Kind::Fixed("False"), None),
    p("sparse", Kind::Fixed("False"), None),
];

const EMBEDDING_BAG: &[Param] = &[
    p("input", Kind::Indices, None),
    p("weight", Kind::Tensor, None),
    p("offsets", Kind::OptAnyTensor, Some("None")),
    p("max_norm", Kind::Fixed("None"), None),
    p("norm_type", Kind::Float, Some("2.0f64")),
    p("scale_grad_by_freq", Kind::Fixed("False"), None),
    p("mode", Kind::Choice(&["mean", "sum", "max"]), None),
    p("sparse", Kind::Fixed("False"), None),
    p("per_sample_weights", Kind::OptTensor, Some("None")),
    p("include_last_offset", Kind::Bool, Some("false")),
    p("padding_idx", Kind::Fixed("None"), None),
];

const CROSS_ENTROPY: &[Param] = &[
    p("input", Kind::Tensor, None),
    p("target", Kind::Indices, None),
    p("weight", Kind::Fixed("None"), None),
    p("size_average", Kind::Fixed("None"), None),
    p("ignore_index", Kind::Int, Some("-100i64")),
    p("reduce", Kind::Fixed("None"), None),
    p("reduction", Kind::Choice(&["mean", "sum", "none"]), None),
    p("label_smoothing", Kind::Float, Some("0.0f64")),
];

/// One row of the table.
#[derive(Debug, PartialEq, Eq)]
pub struct OpInfo {
    pub op: Op,
    /// The backend function, the same under `tl::ops` (CPU) and `tl::cuda::ops` (cuda:0).
    pub name: &'static str,
    pub lane: Lane,
    pub signature: Signature,
    /// Module-level functions that claim it, by full dotted path.
    pub functions: &'static [&'static str],
    /// Tensor methods that claim it.
    pub methods: &'static [&'static str],
    /// Python binary operators that claim it.
    pub operators: &'static [&'static str],
    /// Recognised spellings of the op that its lane rejects with a code (a method form with
    /// options eager accepts, a module constructor): listed so that the lane, not the generic
    /// "not covered", answers them.
    pub rejected_functions: &'static [&'static str],
    pub rejected_methods: &'static [&'static str],
    /// The `.entry` of the PTX kernel that runs it on cuda:0 (several ops may share one);
    /// empty for an op that is CPU-only so far (rejected on cuda:0 with TL209).
    pub cuda_kernel: &'static str,
    /// One line for the docs.
    pub doc: &'static str,
}

/// A unary row's signature: `Unary` (`op(t)`), or the Python signature it is bound by when the
/// function takes options besides the tensor (`F.silu(input, inplace=False)`).
macro_rules! unary_signature {
    () => {
        Signature::Unary
    };
    ($sig:ident($params:expr)) => {
        Signature::$sig($params)
    };
}

macro_rules! op_table {
    (
        unary: [$(
            $(#[doc = $udoc:literal])+
            $u:ident {
                name: $uname:literal, lane: $ulane:ident, $(signature: $usig:ident ($uparams:expr),)?
                functions: [$($ufn:literal),*], methods: [$($um:literal),*],
                rejected_functions: [$($urf:literal),*], rejected_methods: [$($urm:literal),*],
                cuda: $ucuda:literal $(,)?
            }
        ),* $(,)?],
        binary: [$(
            $(#[doc = $bdoc:literal])+
            $b:ident {
                name: $bname:literal, lane: $blane:ident,
                functions: [$($bfn:literal),*], methods: [$($bm:literal),*], operators: [$($bop:literal),*],
                rejected_functions: [$($brf:literal),*], rejected_methods: [$($brm:literal),*],
                cuda: $bcuda:literal $(,)?
            }
        ),* $(,)?],
        other: [$(
            $(#[doc = $odoc:literal])+
            $o:ident {
                name: $oname:literal, lane: $olane:ident, signature: $osig:ident $(($oparams:expr))?,
                functions: [$($ofn:literal),*], methods: [$($om:literal),*], operators: [$($oop:literal),*],
                rejected_functions: [$($orf:literal),*], rejected_methods: [$($orm:literal),*],
                cuda: $ocuda:expr $(,)?
            }
        ),* $(,)?] $(,)?
    ) => {
        /// Every claimed tensor op (a row of [`TABLE`]; `op as usize` is its index).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $($(#[doc = $udoc])+ $u,)*
            $($(#[doc = $bdoc])+ $b,)*
            $($(#[doc = $odoc])+ $o,)*
        }

        /// The elementwise one-tensor ops: the element functions of the fused CPU kernels
        /// (`tl::fused::Unary`) and of the CUDA unary kernels.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Unary {
            $($(#[doc = $udoc])+ $u,)*
        }

        /// The elementwise two-tensor ops (with broadcasting; `Div` is true division).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Binary {
            $($(#[doc = $bdoc])+ $b,)*
        }

        /// The table, in [`Op`] order.
        pub static TABLE: &[OpInfo] = &[
            $(OpInfo {
                op: Op::$u, name: $uname, lane: Lane::$ulane, signature: unary_signature!($($usig($uparams))?),
                functions: &[$($ufn),*], methods: &[$($um),*], operators: &[],
                rejected_functions: &[$($urf),*], rejected_methods: &[$($urm),*],
                cuda_kernel: $ucuda, doc: concat!($($udoc),+),
            },)*
            $(OpInfo {
                op: Op::$b, name: $bname, lane: Lane::$blane, signature: Signature::Binary,
                functions: &[$($bfn),*], methods: &[$($bm),*], operators: &[$($bop),*],
                rejected_functions: &[$($brf),*], rejected_methods: &[$($brm),*],
                cuda_kernel: $bcuda, doc: concat!($($bdoc),+),
            },)*
            $(OpInfo {
                op: Op::$o, name: $oname, lane: Lane::$olane, signature: Signature::$osig $(($oparams))?,
                functions: &[$($ofn),*], methods: &[$($om),*], operators: &[$($oop),*],
                rejected_functions: &[$($orf),*], rejected_methods: &[$($orm),*],
                cuda_kernel: $ocuda, doc: concat!($($odoc),+),
            },)*
        ];

        impl Op {
            /// Every op, in table order.
            pub const ALL: &'static [Op] = &[$(Op::$u,)* $(Op::$b,)* $(Op::$o,)*];

            /// The op as an elementwise one-tensor op.
            pub const fn unary(self) -> Option<Unary> {
                match self {
                    $(Op::$u => Some(Unary::$u),)*
                    _ => None,
                }
            }

            /// The op as an elementwise two-tensor op.
            pub const fn binary(self) -> Option<Binary> {
                match self {
                    $(Op::$b => Some(Binary::$b),)*
                    _ => None,
                }
            }
        }

        impl Unary {
            /// Every unary op, in table order (`op as usize` indexes it).
            pub const ALL: &'static [Unary] = &[$(Unary::$u),*];

            pub const fn op(self) -> Op {
                match self {
                    $(Unary::$u => Op::$u,)*
                }
            }
        }

        impl Binary {
            /// Every binary op, in table order (`op as usize` indexes it).
            pub const ALL: &'static [Binary] = &[$(Binary::$b),*];

            pub const fn op(self) -> Op {
                match self {
                    $(Binary::$b => Op::$b,)*
                }
            }
        }
    };
}

op_table! {
    unary: [
        /// `max(x, 0)`, keeping NaN and `-0.0`.
        Relu {
            name: "relu", lane: Activations,
            functions: ["torch.relu", "torch.nn.functional.relu"], methods: ["relu"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_relu",
        },
        /// `1 / (1 + exp(-x))`.
        Sigmoid {
            name: "sigmoid", lane: Activations,
            functions: ["torch.sigmoid"], methods: ["sigmoid"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sigmoid",
        },
        /// Hyperbolic tangent.
        Tanh {
            name: "tanh", lane: Activations,
            functions: ["torch.tanh"], methods: ["tanh"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_tanh",
        },
        /// Exact (erf) GELU, `approximate="none"`.
        Gelu {
            name: "gelu", lane: Gelu,
            functions: ["torch.nn.functional.gelu"], methods: [],
            rejected_functions: ["torch.nn.GELU"], rejected_methods: ["gelu"],
            cuda: "tl_gelu",
        },
        /// Absolute value.
        Abs {
            name: "abs", lane: Unary,
            functions: ["torch.abs"], methods: ["abs"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_abs",
        },
        /// Negation (`negative` is eager's alias of the same kernel).
        Neg {
            name: "neg", lane: Unary,
            functions: ["torch.neg", "torch.negative"], methods: ["neg", "negative"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_neg",
        },
        /// `x * x`.
        Square {
            name: "square", lane: Unary,
            functions: ["torch.square"], methods: ["square"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_square",
        },
        /// Natural exponential.
        Exp {
            name: "exp", lane: Unary,
            functions: ["torch.exp"], methods: ["exp"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_exp",
        },
        /// Natural logarithm (NaN below 0, `-inf` at 0).
        Log {
            name: "log", lane: Unary,
            functions: ["torch.log"], methods: ["log"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_log",
        },
        /// Square root (NaN below 0).
        Sqrt {
            name: "sqrt", lane: Unary,
            functions: ["torch.sqrt"], methods: ["sqrt"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sqrt",
        },
        /// `x / (1 + exp(-x))` (SiLU / swish): an element function, so it fuses into GEMM
        /// epilogues and elementwise chains (SwiGLU's `silu(x @ w1) * (x @ w3)`).
        Silu {
            name: "silu", lane: Pointwise, signature: Params(ACTIVATION),
            functions: ["torch.nn.functional.silu"], methods: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_silu",
        },
    ],
    binary: [
        /// `a + b` with broadcasting.
        Add {
            name: "add", lane: Binops,
            functions: ["torch.add"], methods: ["add"], operators: ["+"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_add",
        },
        /// `a - b` with broadcasting.
        Sub {
            name: "sub", lane: Binops,
            functions: ["torch.sub"], methods: ["sub", "subtract"], operators: ["-"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sub",
        },
        /// `a * b` with broadcasting.
        Mul {
            name: "mul", lane: Binops,
            functions: ["torch.mul"], methods: ["mul", "multiply"], operators: ["*"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_mul",
        },
        /// `a / b`, true division with broadcasting.
        Div {
            name: "div", lane: Binops,
            functions: ["torch.div"], methods: ["div", "divide", "true_divide"], operators: ["/"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_div",
        },
    ],
    other: [
        /// `x @ w.T + b` (bias optional).
        Linear {
            name: "linear", lane: Linear, signature: Linear,
            functions: ["torch.nn.functional.linear"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_matmul",
        },
        /// Matrix product of rank-2/1 tensors.
        Matmul {
            name: "matmul", lane: Binops, signature: Product,
            functions: ["torch.matmul"], methods: ["matmul"], operators: ["@"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_matmul",
        },
        /// Sum over one static dim.
        SumDim {
            name: "sum_dim", lane: Reductions, signature: DimKeepdim,
            functions: ["torch.sum"], methods: ["sum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sum",
        },
        /// Mean over one static dim.
        MeanDim {
            name: "mean_dim", lane: Reductions, signature: DimKeepdim,
            functions: ["torch.mean"], methods: ["mean"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sum",
        },
        /// Softmax over one static dim.
        Softmax {
            name: "softmax", lane: Classification, signature: Dim,
            functions: ["torch.softmax", "torch.nn.functional.softmax"], methods: ["softmax"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_softmax",
        },
        /// Index of the maximum over one static dim (int64 labels).
        Argmax {
            name: "argmax", lane: Classification, signature: DimKeepdim,
            functions: ["torch.argmax"], methods: ["argmax"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_argmax",
        },
        /// `t ** s` with a Python number `s` (eager's `pow.Tensor_Scalar`, with its exact
        /// special cases for 2, 0.5, -1 …).
        Pow {
            name: "pow", lane: Pointwise, signature: TensorNumber,
            functions: ["torch.pow"], methods: ["pow"], operators: ["**"],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_square/tl_sqrt/tl_cube/tl_reciprocal/tl_reciprocal_square/tl_copy",
        },
        /// `min(max(t, lo), hi)` with Python-number bounds, either optional.
        Clamp {
            name: "clamp", lane: Pointwise, signature: Clamp,
            functions: ["torch.clamp", "torch.clip"], methods: ["clamp", "clip"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_clamp/tl_clamp_min/tl_clamp_max",
        },
        /// `max(t, lo)` with a Python-number bound.
        ClampMin {
            name: "clamp_min", lane: Pointwise, signature: TensorNumber,
            functions: ["torch.clamp_min"], methods: ["clamp_min"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_clamp_min",
        },
        /// `min(t, hi)` with a Python-number bound.
        ClampMax {
            name: "clamp_max", lane: Pointwise, signature: TensorNumber,
            functions: ["torch.clamp_max"], methods: ["clamp_max"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_clamp_max",
        },
        /// `1 / sqrt(x)`, libtorch's kernel on CPU.
        Rsqrt {
            name: "rsqrt", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.rsqrt"], methods: ["rsqrt"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_rsqrt",
        },
        /// The error function, libtorch's kernel on CPU.
        Erf {
            name: "erf", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.erf", "torch.special.erf"], methods: ["erf"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_erf",
        },
        /// `log(1 + exp(beta·x)) / beta`, linear above `threshold`, libtorch's kernel on CPU.
        Softplus {
            name: "softplus", lane: Pointwise, signature: Params(SOFTPLUS),
            functions: ["torch.nn.functional.softplus"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_softplus",
        },
        /// `log(1 + x)`, accurate near 0, libtorch's kernel on CPU.
        Log1p {
            name: "log1p", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.log1p", "torch.special.log1p"], methods: ["log1p"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_log1p",
        },
        /// `exp(x) - 1`, accurate near 0, libtorch's kernel on CPU.
        Expm1 {
            name: "expm1", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.expm1", "torch.special.expm1"], methods: ["expm1"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_expm1",
        },
        /// Sine, libtorch's kernel.
        Sin {
            name: "sin", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.sin"], methods: ["sin"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The sign (-1, 0 or 1; NaN stays NaN), libtorch's kernel (TD-MPC2's and DreamerV3's `symlog`).
        Sign {
            name: "sign", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.sign"], methods: ["sign"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Rounding toward -inf, libtorch's kernel (TD-MPC2's `two_hot` bin index).
        Floor {
            name: "floor", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.floor"], methods: ["floor"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The outer product of two rank-1 tensors (`torch.outer(t, freqs)`: rotary frequencies),
        /// libtorch's kernel.
        Outer {
            name: "outer", lane: Pointwise, signature: Params(OUTER),
            functions: ["torch.outer", "torch.ger"], methods: ["outer", "ger"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Arctangent, libtorch's kernel.
        Atan {
            name: "atan", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.atan", "torch.arctan"], methods: ["atan", "arctan"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Cosine, libtorch's kernel.
        Cos {
            name: "cos", lane: Pointwise, signature: Params(INPUT),
            functions: ["torch.cos"], methods: ["cos"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `min(max(x, 0), 6)`, libtorch's kernel on CPU.
        Relu6 {
            name: "relu6", lane: Pointwise, signature: Params(ACTIVATION),
            functions: ["torch.nn.functional.relu6"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_clamp",
        },
        /// `x · relu6(x + 3) / 6`, libtorch's kernel on CPU.
        Hardswish {
            name: "hardswish", lane: Pointwise, signature: Params(ACTIVATION),
            functions: ["torch.nn.functional.hardswish"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_hardswish",
        },
        /// `relu6(x + 3) / 6`, libtorch's kernel on CPU.
        Hardsigmoid {
            name: "hardsigmoid", lane: Pointwise, signature: Params(ACTIVATION),
            functions: ["torch.nn.functional.hardsigmoid"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_hardsigmoid",
        },
        /// `x · tanh(softplus(x))`, libtorch's kernel on CPU.
        Mish {
            name: "mish", lane: Pointwise, signature: Params(ACTIVATION),
            functions: ["torch.nn.functional.mish"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_mish",
        },
        /// Scaled ELU with eager's fixed constants, libtorch's kernel on CPU.
        Selu {
            name: "selu", lane: Pointwise, signature: Params(ACTIVATION),
            functions: ["torch.nn.functional.selu"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_elu",
        },
        /// `x` above 0, `exp(x) - 1` below (`alpha=1.0`), libtorch's kernel on CPU.
        Elu {
            name: "elu", lane: Pointwise, signature: Params(ELU),
            functions: ["torch.nn.functional.elu"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_elu",
        },
        /// `x` above 0, `x · negative_slope` elsewhere (NaN and `-0.0` kept).
        LeakyRelu {
            name: "leaky_relu", lane: Pointwise, signature: Params(LEAKY_RELU),
            functions: ["torch.nn.functional.leaky_relu"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_leaky_relu",
        },
        /// `x` clamped to `[min_val, max_val]` (eager's `hardtanh` is its clamp).
        Hardtanh {
            name: "hardtanh", lane: Pointwise, signature: Params(HARDTANH),
            functions: ["torch.nn.functional.hardtanh"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_clamp",
        },
        /// Layer normalization over the trailing dims, with optional affine weight and bias (libtorch's kernel on CPU).
        LayerNorm {
            name: "layer_norm", lane: Norms, signature: LayerNorm,
            functions: ["torch.nn.functional.layer_norm", "torch.layer_norm"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_layer_norm",
        },
        /// Elementwise maximum of two tensors (NaN propagates), with broadcasting.
        Maximum {
            name: "maximum", lane: Pointwise, signature: Product,
            functions: ["torch.maximum", "torch.max"], methods: ["maximum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_maximum",
        },
        /// Elementwise minimum of two tensors (NaN propagates), with broadcasting.
        Minimum {
            name: "minimum", lane: Pointwise, signature: Product,
            functions: ["torch.minimum", "torch.min"], methods: ["minimum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_minimum",
        },
        /// Batched matrix product of two rank-3 tensors (equal batches).
        Bmm {
            name: "bmm", lane: Binops, signature: Product,
            functions: ["torch.bmm"], methods: ["bmm"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_matmul",
        },
        /// Matrix product of two rank-2 tensors (libtorch's `mm`, which `matmul` calls on them).
        Mm {
            name: "mm", lane: Binops, signature: Product,
            functions: ["torch.mm"], methods: ["mm"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_matmul",
        },
        /// A view with a new shape (`-1` inferred), as `Tensor.view`: an error where the
        /// strides do not allow one.
        View {
            name: "view", lane: Views, signature: IntList,
            functions: [], methods: ["view"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A new shape: a view where the strides allow one, else a copy (as eager).
        Reshape {
            name: "reshape", lane: Views, signature: IntList,
            functions: ["torch.reshape"], methods: ["reshape"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_copy",
        },
        /// A broadcast view to a larger shape (`-1` keeps a size).
        Expand {
            name: "expand", lane: Views, signature: IntList,
            functions: [], methods: ["expand"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A broadcast view to another tensor's shape.
        ExpandAs {
            name: "expand_as", lane: Views, signature: Product,
            functions: [], methods: ["expand_as"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A view with another tensor's shape (`t.view(other.shape)`).
        ViewAs {
            name: "view_as", lane: Views, signature: Product,
            functions: [], methods: ["view_as"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// `t.reshape(other.shape)`: a view where the strides allow it, else a copy.
        ReshapeAs {
            name: "reshape_as", lane: Views, signature: Product,
            functions: [], methods: ["reshape_as"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_copy",
        },
        /// A view with the dims reordered.
        Permute {
            name: "permute", lane: Views, signature: IntList,
            functions: ["torch.permute"], methods: ["permute"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A view with two dims swapped.
        Transpose {
            name: "transpose", lane: Views, signature: DimPair,
            functions: ["torch.transpose", "torch.swapaxes", "torch.swapdims"], methods: ["transpose", "swapaxes", "swapdims"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// The matrix transpose of a rank-2 tensor (a rank-1 tensor as it is), a view.
        T {
            name: "t", lane: Views, signature: Tensor,
            functions: ["torch.t"], methods: ["t"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A view with a size-1 dim inserted.
        Unsqueeze {
            name: "unsqueeze", lane: Views, signature: Dim,
            functions: ["torch.unsqueeze"], methods: ["unsqueeze"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// Dims `start..=end` merged into one (a view where possible, else a copy).
        Flatten {
            name: "flatten", lane: Views, signature: DimPair,
            functions: ["torch.flatten"], methods: ["flatten"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_copy",
        },
        /// Basic indexing `t[…]` with ints, slices, `None` and `...`: a view.
        Index {
            name: "index", lane: Views, signature: Index,
            functions: [], methods: [], operators: ["[]"],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// `n` parts of (nearly) equal size along a dim, views, unpacked into names.
        Chunk {
            name: "chunk", lane: Views, signature: Parts,
            functions: ["torch.chunk"], methods: ["chunk"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// Parts of a given size along a dim, views, unpacked into names.
        Split {
            name: "split", lane: Views, signature: Parts,
            functions: ["torch.split"], methods: ["split"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// The slices along a dim (that dim removed), views, unpacked into names.
        Unbind {
            name: "unbind", lane: Views, signature: Parts,
            functions: ["torch.unbind"], methods: ["unbind"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// `length` elements of a dim from `start`, a view.
        Narrow {
            name: "narrow", lane: Views, signature: Params(NARROW),
            functions: ["torch.narrow"], methods: ["narrow"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// One index of a dim, the dim removed, a view.
        Select {
            name: "select", lane: Views, signature: Params(SELECT),
            functions: ["torch.select"], methods: ["select"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// One dim split into several sizes (`-1` inferred), a view.
        Unflatten {
            name: "unflatten", lane: Views, signature: Params(UNFLATTEN),
            functions: ["torch.unflatten"], methods: ["unflatten"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A size-1 dim removed, a view (native code refuses a dim of another size, which keeps the rank).
        Squeeze {
            name: "squeeze", lane: Views, signature: Params(SQUEEZE),
            functions: ["torch.squeeze"], methods: ["squeeze"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// The same values, cut from autograd: an alias of the input (native results never require grad).
        Detach {
            name: "detach", lane: Views, signature: Params(DETACH),
            functions: ["torch.detach"], methods: ["detach"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// A copy in eager's preserved memory format (the input's strides when it is dense).
        Clone {
            name: "clone", lane: Views, signature: Params(CLONE),
            functions: ["torch.clone"], methods: ["clone"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The values shifted cyclically along dims (the flattened tensor without `dims`).
        Roll {
            name: "roll", lane: Views, signature: Params(ROLL),
            functions: ["torch.roll"], methods: ["roll"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Dropout outside training: the input itself, as eager returns it.
        Dropout {
            name: "dropout", lane: Views, signature: Params(DROPOUT),
            functions: ["torch.nn.functional.dropout"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: CUDA_VIEW,
        },
        /// Sliding windows of `size` elements every `step` along `dimension`, as a new last dim
        /// (PatchTST's patches): a view.
        Unfold {
            name: "unfold", lane: Views, signature: Params(UNFOLD),
            functions: [], methods: ["unfold"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The tensor with the order of its elements reversed along `dims` (a copy).
        Flip {
            name: "flip", lane: Views, signature: Params(FLIP),
            functions: ["torch.flip"], methods: ["flip"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Each element repeated `repeats` times along `dim` (the flattened tensor without it; a copy).
        RepeatInterleave {
            name: "repeat_interleave", lane: Views, signature: Params(REPEAT_INTERLEAVE),
            functions: ["torch.repeat_interleave"], methods: ["repeat_interleave"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The tensor tiled `repeats` times along each dim (a copy).
        Repeat {
            name: "repeat", lane: Views, signature: Params(REPEAT),
            functions: [], methods: ["repeat"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A copy in another dtype (`.to(torch.float32)`, `.long()`, `.bool()`, …).
        ToDtype {
            name: "to_dtype", lane: Creation, signature: Params(TO_DTYPE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Tensors of one shape but along `dim` joined along it (a copy).
        Cat {
            name: "cat", lane: Views, signature: TensorList,
            functions: ["torch.cat", "torch.concat", "torch.concatenate"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_copy",
        },
        /// Tensors of one shape stacked along a new dim (a copy).
        Stack {
            name: "stack", lane: Views, signature: TensorList,
            functions: ["torch.stack"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_copy",
        },
        /// Sums of products over the subscripts of an equation (`torch.einsum`), libtorch's kernel.
        Einsum {
            name: "einsum", lane: Binops, signature: TensorList,
            functions: ["torch.einsum"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Division rounded toward minus infinity (`a // b`, `torch.floor_divide`) or toward zero
        /// (`torch.div(a, b, rounding_mode="trunc")`), with broadcasting: libtorch's `div`.
        DivMode {
            name: "div_mode", lane: Binops, signature: Params(DIV_MODE),
            functions: ["torch.floor_divide"], methods: ["floor_divide"], operators: ["//"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Python's modulo (`a % b`, `torch.remainder`: the sign of the divisor), with broadcasting:
        /// libtorch's `remainder`.
        Remainder {
            name: "remainder", lane: Binops, signature: Params(REMAINDER),
            functions: ["torch.remainder"], methods: ["remainder"], operators: ["%"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Sums of products over pairs of dims of two tensors (`torch.tensordot`), libtorch's kernel.
        Tensordot {
            name: "tensordot", lane: Binops, signature: Params(TENSORDOT),
            functions: ["torch.tensordot"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The tensor itself when contiguous, else a contiguous copy.
        Contiguous {
            name: "contiguous", lane: Views, signature: Tensor,
            functions: [], methods: ["contiguous"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_copy",
        },
        /// `a == b` elementwise (a bool tensor), with broadcasting and eager's type promotion.
        Eq {
            name: "eq", lane: Masking, signature: Product,
            functions: ["torch.eq"], methods: ["eq"], operators: ["=="],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a != b` elementwise (a bool tensor).
        Ne {
            name: "ne", lane: Masking, signature: Product,
            functions: ["torch.ne"], methods: ["ne"], operators: ["!="],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a < b` elementwise (a bool tensor).
        Lt {
            name: "lt", lane: Masking, signature: Product,
            functions: ["torch.lt"], methods: ["lt"], operators: ["<"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a <= b` elementwise (a bool tensor).
        Le {
            name: "le", lane: Masking, signature: Product,
            functions: ["torch.le"], methods: ["le"], operators: ["<="],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a > b` elementwise (a bool tensor).
        Gt {
            name: "gt", lane: Masking, signature: Product,
            functions: ["torch.gt"], methods: ["gt"], operators: [">"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a >= b` elementwise (a bool tensor).
        Ge {
            name: "ge", lane: Masking, signature: Product,
            functions: ["torch.ge"], methods: ["ge"], operators: [">="],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `t ** u` with a tensor exponent, or `number ** t` (reached through `torch.pow`,
        /// `.pow` and `**`): eager's promotion and broadcasting.
        PowTensor {
            name: "pow_tensor", lane: Pointwise, signature: Params(POW_TENSOR),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `min(max(t, lo), hi)` with tensor bounds (broadcast), either optional (reached
        /// through `clamp`/`clip` with a tensor bound).
        ClampTensor {
            name: "clamp_tensor", lane: Pointwise, signature: Params(CLAMP_TENSOR),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a & b` of bool tensors (a bool tensor), with broadcasting.
        LogicalAnd {
            name: "logical_and", lane: Masking, signature: Product,
            functions: ["torch.logical_and"], methods: [], operators: ["&"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a | b` of bool tensors.
        LogicalOr {
            name: "logical_or", lane: Masking, signature: Product,
            functions: ["torch.logical_or"], methods: [], operators: ["|"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `a ^ b` of bool tensors.
        LogicalXor {
            name: "logical_xor", lane: Masking, signature: Product,
            functions: ["torch.logical_xor"], methods: [], operators: ["^"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `~m` of a bool tensor, `torch.logical_not(t)` of any (a bool tensor).
        LogicalNot {
            name: "logical_not", lane: Masking, signature: Tensor,
            functions: ["torch.logical_not"], methods: ["logical_not"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `value` where a bool mask is set, the input elsewhere.
        MaskedFill {
            name: "masked_fill", lane: Masking, signature: Params(MASKED_FILL),
            functions: ["torch.masked_fill"], methods: ["masked_fill"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `input` where a bool condition is set, `other` elsewhere (tensors or Python numbers).
        Where {
            name: "where_", lane: Masking, signature: Params(WHERE),
            functions: ["torch.where"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `torch.tensor([… for i in range(a) for j in range(b)])`: the int64 rank-1 tensor of
        /// the ints a comprehension of `range` loops makes (claimed by the walk, which lowers
        /// the loops; an empty list refuses, eager's is float32).
        TensorOfInts {
            name: "tensor_of_ints", lane: Creation, signature: Params(TENSOR_OF_INTS),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `torch.where(cond)` of a rank-1 tensor: the 1-tuple of the int64 indices of its
        /// nonzero elements (eager's `nonzero(as_tuple=True)`).
        WhereNonzero {
            name: "where_nonzero", lane: Masking, signature: Params(WHERE_NONZERO),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Samples of class indices from rows of probabilities, from torch's default generator.
        Multinomial {
            name: "multinomial", lane: Masking, signature: Params(MULTINOMIAL),
            functions: ["torch.multinomial"], methods: ["multinomial"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `start, start + step, …` below `end`, int64 (or float32) on the CPU.
        Arange {
            name: "arange", lane: Creation, signature: Params(ARANGE),
            functions: ["torch.arange"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `steps` evenly spaced float32 values from `start` to `end` (TD-MPC2's and DreamerV3's
        /// bins), libtorch's kernel.
        Linspace {
            name: "linspace", lane: Creation, signature: Params(LINSPACE),
            functions: ["torch.linspace"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The p-norm over the given dims (`p` omitted or `"fro"`: 2), libtorch's vector norm on CPU (orders 1 and 2 on cuda:0).
        Norm {
            name: "norm", lane: Reductions, signature: Params(NORM),
            functions: ["torch.norm"], methods: ["norm"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_abs/tl_square/tl_sum/tl_sqrt",
        },
        /// `torch.linalg.vector_norm(x, ord, dim, keepdim)`.
        VectorNorm {
            name: "vector_norm", lane: Reductions, signature: Params(VECTOR_NORM),
            functions: ["torch.linalg.vector_norm"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_abs/tl_square/tl_sum/tl_sqrt",
        },
        /// `x / max(‖x‖_p over dim, eps)`, as eager's `F.normalize` computes it.
        Normalize {
            name: "normalize", lane: Norms, signature: Params(NORMALIZE),
            functions: ["torch.nn.functional.normalize"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_abs/tl_square/tl_sum/tl_sqrt/tl_clamp_min/tl_div",
        },
        /// A tensor of zeros of the given sizes (float32, int64 or bool), on the CPU.
        Zeros {
            name: "zeros", lane: Creation, signature: Params(SIZED),
            functions: ["torch.zeros"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// An uninitialised tensor of the given sizes (float32, int64 or bool), on the CPU: its
        /// values are unspecified, as eager's (diffusers' `baddbmm` input with `beta=0`).
        Empty {
            name: "empty", lane: Creation, signature: Params(SIZED),
            functions: ["torch.empty"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A tensor of ones of the given sizes, on the CPU.
        Ones {
            name: "ones", lane: Creation, signature: Params(SIZED),
            functions: ["torch.ones"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A tensor of the given sizes filled with a Python number (its dtype from the number, as eager infers it).
        Full {
            name: "full", lane: Creation, signature: Params(FULL),
            functions: ["torch.full"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `torch.tensor(number)`: the 0-dim tensor of a Python number (Gemma's embedding
        /// normalizer), the dtype eager infers from it unless given.
        ScalarTensor {
            name: "scalar_tensor", lane: Creation, signature: Params(SCALAR_TENSOR),
            functions: ["torch.tensor"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Zeros of the input's shape, dtype and device.
        ZerosLike {
            name: "zeros_like", lane: Creation, signature: Params(LIKE),
            functions: ["torch.zeros_like"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Ones of the input's shape, dtype and device.
        OnesLike {
            name: "ones_like", lane: Creation, signature: Params(LIKE),
            functions: ["torch.ones_like"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A Python number in the input's shape, dtype and device.
        FullLike {
            name: "full_like", lane: Creation, signature: Params(FULL_LIKE),
            functions: ["torch.full_like"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The tanh approximation of GELU, libtorch's kernel on CPU (reached through
        /// `F.gelu(x, approximate="tanh")`: see [`CLAIMED_THROUGH`]).
        GeluTanh {
            name: "gelu_tanh", lane: Gelu, signature: Params(INPUT),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_gelu_tanh",
        },
        /// `(values, indices)` of the maximum over one dim (`torch.max(t, dim)`, `t.max(dim)`).
        MaxDim {
            name: "max_dim", lane: Reductions, signature: Params(EXTREMUM),
            functions: [], methods: ["max"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `(values, indices)` of the minimum over one dim (`torch.min(t, dim)`, `t.min(dim)`).
        MinDim {
            name: "min_dim", lane: Reductions, signature: Params(EXTREMUM),
            functions: [], methods: ["min"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `(values, indices)` of the `k` largest (or smallest) along a dim (`torch.topk`, `t.topk`).
        Topk {
            name: "topk", lane: Reductions, signature: Params(TOPK),
            functions: ["torch.topk"], methods: ["topk"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The maximum over the given dims.
        Amax {
            name: "amax", lane: Reductions, signature: Params(REDUCE),
            functions: ["torch.amax"], methods: ["amax"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_amax",
        },
        /// The minimum over the given dims.
        Amin {
            name: "amin", lane: Reductions, signature: Params(REDUCE),
            functions: ["torch.amin"], methods: ["amin"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_amin",
        },
        /// `log(sum(exp(x)))` over the given dims, computed stably.
        Logsumexp {
            name: "logsumexp", lane: Reductions, signature: Params(REDUCE),
            functions: ["torch.logsumexp"], methods: ["logsumexp"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_logsumexp",
        },
        /// The variance over the given dims (`unbiased` or `correction`).
        Var {
            name: "var", lane: Reductions, signature: Params(MOMENT),
            functions: ["torch.var"], methods: ["var"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_var",
        },
        /// The standard deviation over the given dims (`unbiased` or `correction`).
        Std {
            name: "std", lane: Reductions, signature: Params(MOMENT),
            functions: ["torch.std"], methods: ["std"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_var",
        },
        /// The product over one dim.
        Prod {
            name: "prod", lane: Reductions, signature: Params(ONE_DIM_REDUCE),
            functions: ["torch.prod"], methods: ["prod"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_prod",
        },
        /// Index of the minimum over one dim (int64).
        Argmin {
            name: "argmin", lane: Reductions, signature: Params(ARGMIN),
            functions: ["torch.argmin"], methods: ["argmin"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Whether every element over the given dims is true (a bool tensor).
        All {
            name: "all", lane: Reductions, signature: Params(REDUCE_ANY),
            functions: ["torch.all"], methods: ["all"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Whether any element over the given dims is true (a bool tensor).
        Any {
            name: "any", lane: Reductions, signature: Params(REDUCE_ANY),
            functions: ["torch.any"], methods: ["any"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Sum over a tuple or list of static dims (`x.sum((2, 3))`: reached through `sum`'s
        /// spellings, see [`CLAIMED_THROUGH`]).
        SumDims {
            name: "sum_dims", lane: Reductions, signature: Params(SUM_DIMS),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sum",
        },
        /// Mean over a tuple or list of static dims (global average pooling as
        /// `x.mean((2, 3), keepdim=True)`: reached through `mean`'s spellings).
        MeanDims {
            name: "mean_dims", lane: Reductions, signature: Params(SUM_MEAN_DIMS),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sum",
        },
        /// The sum of every element (`x.sum()`, `torch.sum(x)`): rank 0, int64 for integer and bool inputs. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        SumAll {
            name: "sum_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The mean of every element (`x.mean()`): float32 rank 0. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        MeanAll {
            name: "mean_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The largest element (`x.max()`, `torch.max(x)`): rank 0 of the input's dtype. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        MaxAll {
            name: "max_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The smallest element (`x.min()`, `torch.min(x)`): rank 0 of the input's dtype. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        MinAll {
            name: "min_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The flat index of the largest element (`x.argmax()`): int64 rank 0. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        ArgmaxAll {
            name: "argmax_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The flat index of the smallest element (`x.argmin()`): int64 rank 0. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        ArgminAll {
            name: "argmin_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The product of every element (`x.prod()`): rank 0, int64 for integer and bool inputs. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        ProdAll {
            name: "prod_all", lane: Reductions, signature: Params(WHOLE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The standard deviation of every element (`x.std()`, `unbiased`): float32 rank 0. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        StdAll {
            name: "std_all", lane: Reductions, signature: Params(WHOLE_MOMENT),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The variance of every element (`x.var()`, `unbiased`): float32 rank 0. Reached through the
        /// op's spellings without a dim (see [`CLAIMED_THROUGH`]).
        VarAll {
            name: "var_all", lane: Reductions, signature: Params(WHOLE_MOMENT),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `log(softmax(x))` over one dim, computed stably.
        LogSoftmax {
            name: "log_softmax", lane: Classification, signature: Params(LOG_SOFTMAX),
            functions: ["torch.nn.functional.log_softmax", "torch.log_softmax"], methods: ["log_softmax"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_log_softmax",
        },
        /// Gated linear unit: one half of a dim times the sigmoid of the other.
        Glu {
            name: "glu", lane: Pointwise, signature: Params(GLU),
            functions: ["torch.nn.functional.glu"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_sigmoid/tl_mul",
        },
        /// The lower triangle (below `diagonal`), zeros elsewhere.
        Tril {
            name: "tril", lane: Masking, signature: Params(TRIANGLE),
            functions: ["torch.tril"], methods: ["tril"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The upper triangle (above `diagonal`), zeros elsewhere.
        Triu {
            name: "triu", lane: Masking, signature: Params(TRIANGLE),
            functions: ["torch.triu"], methods: ["triu"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Values picked along a dim by an int64 index of the same rank.
        Gather {
            name: "gather", lane: Embedding, signature: Params(GATHER),
            functions: ["torch.gather"], methods: ["gather"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A copy of the input with values of `src` written at an int64 index along a dim.
        Scatter {
            name: "scatter", lane: Embedding, signature: Params(SCATTER),
            functions: ["torch.scatter"], methods: ["scatter"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The pair of coordinate grids of two rank-1 tensors.
        Meshgrid {
            name: "meshgrid", lane: Creation, signature: Params(MESHGRID),
            functions: ["torch.meshgrid"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Whether each element is among the test elements (a bool tensor of the elements' shape).
        Isin {
            name: "isin", lane: Masking, signature: Params(ISIN),
            functions: ["torch.isin"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `(values, indices)` sorted along a dim.
        Sort {
            name: "sort", lane: Reductions, signature: Params(SORT),
            functions: ["torch.sort"], methods: ["sort"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The int64 indices that sort along a dim.
        Argsort {
            name: "argsort", lane: Reductions, signature: Params(SORT),
            functions: ["torch.argsort"], methods: ["argsort"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Running sums along a dim (int64 for int64 and bool inputs, as eager).
        Cumsum {
            name: "cumsum", lane: Reductions, signature: Params(CUMSUM),
            functions: ["torch.cumsum"], methods: ["cumsum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The sum over the given dims with NaN counted as zero.
        Nansum {
            name: "nansum", lane: Reductions, signature: Params(SUM_MEAN_DIMS),
            functions: ["torch.nansum"], methods: ["nansum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Slices along a dim picked by a rank-1 int64 index.
        IndexSelect {
            name: "index_select", lane: Embedding, signature: Params(INDEX_SELECT),
            functions: ["torch.index_select"], methods: ["index_select"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// int64 class indices as one-hot int64 rows.
        OneHot {
            name: "one_hot", lane: Embedding, signature: Params(ONE_HOT),
            functions: ["torch.nn.functional.one_hot"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Root-mean-square normalization over the trailing dims (libtorch's kernel on CPU).
        RmsNorm {
            name: "rms_norm", lane: Norms, signature: Params(RMS_NORM),
            functions: ["torch.nn.functional.rms_norm", "torch.rms_norm"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_rms_norm",
        },
        /// Scaled dot-product attention (mask, causal, scale, grouped heads), libtorch's kernel on CPU.
        ScaledDotProductAttention {
            name: "scaled_dot_product_attention", lane: Attention, signature: Params(SDPA),
            functions: ["torch.nn.functional.scaled_dot_product_attention"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_matmul/tl_mul_scalar/tl_add/tl_softmax",
        },
        /// `F.multi_head_attention_forward(…, need_weights=False)`: eager's ATen ops in eager's
        /// order (the module `nn.MultiheadAttention` runs), so `(output, None)` is eager's.
        MultiHeadAttentionForward {
            name: "multi_head_attention_forward", lane: Attention, signature: Params(MHA),
            functions: ["torch.nn.functional.multi_head_attention_forward"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Categorical(logits=…)`: eager's argument check, then the normalized logits it stores.
        Categorical {
            name: "categorical", lane: Distributions, signature: Params(CATEGORICAL),
            functions: ["torch.distributions.Categorical", "torch.distributions.categorical.Categorical"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Normal(loc, scale)`: eager's argument checks, then the broadcast `loc` it stores.
        Normal {
            name: "normal", lane: Distributions, signature: Params(NORMAL),
            functions: ["torch.distributions.Normal", "torch.distributions.normal.Normal"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Categorical.probs`: the softmax of the normalized logits.
        CategoricalProbs {
            name: "categorical_probs", lane: Distributions, signature: Params(LOGITS),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Categorical.log_prob(value)`: eager's sample check, then the log-probability of each index.
        CategoricalLogProb {
            name: "categorical_log_prob", lane: Distributions, signature: Params(LOGITS_VALUE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Categorical.entropy()`.
        CategoricalEntropy {
            name: "categorical_entropy", lane: Distributions, signature: Params(LOGITS),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Categorical.mode`: the most probable index.
        CategoricalMode {
            name: "categorical_mode", lane: Distributions, signature: Params(LOGITS),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Normal.log_prob(value)`: eager's sample check, then its formula.
        NormalLogProb {
            name: "normal_log_prob", lane: Distributions, signature: Params(LOC_SCALE_VALUE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Normal.entropy()`.
        NormalEntropy {
            name: "normal_entropy", lane: Distributions, signature: Params(LOC_SCALE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `Normal.stddev` / `.scale`: the broadcast scale.
        NormalStddev {
            name: "normal_stddev", lane: Distributions, signature: Params(LOC_SCALE),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// 1-D convolution (stride, padding, dilation, groups), libtorch's kernel on CPU.
        Conv1d {
            name: "conv1d", lane: Vision, signature: Params(CONV1D),
            functions: ["torch.nn.functional.conv1d", "torch.conv1d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_conv",
        },
        /// 2-D convolution (stride, padding, dilation, groups), libtorch's kernel on CPU.
        Conv2d {
            name: "conv2d", lane: Vision, signature: Params(CONV2D),
            functions: ["torch.nn.functional.conv2d", "torch.conv2d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_conv",
        },
        /// A 1-D convolution with `padding="same"` or `"valid"` (reached through `F.conv1d`).
        Conv1dPadding {
            name: "conv1d_padding", lane: Vision, signature: Params(CONV1D_PADDING),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A 2-D convolution with `padding="same"` or `"valid"` (reached through `F.conv2d`).
        Conv2dPadding {
            name: "conv2d_padding", lane: Vision, signature: Params(CONV2D_PADDING),
            functions: [], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// 1-D transposed convolution (HiFi-GAN's and EnCodec's upsampling), libtorch's kernel.
        ConvTranspose1d {
            name: "conv_transpose1d", lane: Vision, signature: Params(CONV_TRANSPOSE1D),
            functions: ["torch.nn.functional.conv_transpose1d", "torch.conv_transpose1d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// 2-D transposed convolution, libtorch's kernel.
        ConvTranspose2d {
            name: "conv_transpose2d", lane: Vision, signature: Params(CONV_TRANSPOSE2D),
            functions: ["torch.nn.functional.conv_transpose2d", "torch.conv_transpose2d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Nearest or bilinear resizing of a batch of images (rank 4), eager's size rules.
        Interpolate {
            name: "interpolate", lane: Vision, signature: Params(INTERPOLATE),
            functions: ["torch.nn.functional.interpolate"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `beta * input + alpha * (mat1 @ mat2)`, libtorch's kernel (GPT-2's `Conv1D`).
        Addmm {
            name: "addmm", lane: Binops, signature: Params(ADDMM),
            functions: ["torch.addmm"], methods: ["addmm"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `beta * input + alpha * (batch1 @ batch2)`, batched, libtorch's kernel.
        Baddbmm {
            name: "baddbmm", lane: Binops, signature: Params(BADDBMM),
            functions: ["torch.baddbmm"], methods: ["baddbmm"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// 1-D max pooling (our loop for contiguous input on CPU, libtorch's kernel otherwise).
        MaxPool1d {
            name: "max_pool1d", lane: Vision, signature: Params(MAX_POOL1D),
            functions: ["torch.nn.functional.max_pool1d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_max_pool",
        },
        /// 2-D max pooling (our loop for contiguous input on CPU, libtorch's kernel otherwise).
        MaxPool2d {
            name: "max_pool2d", lane: Vision, signature: Params(MAX_POOL2D),
            functions: ["torch.nn.functional.max_pool2d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_max_pool",
        },
        /// 1-D average pooling, libtorch's kernel on CPU.
        AvgPool1d {
            name: "avg_pool1d", lane: Vision, signature: Params(AVG_POOL1D),
            functions: ["torch.nn.functional.avg_pool1d", "torch.avg_pool1d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_avg_pool",
        },
        /// 2-D average pooling, libtorch's kernel on CPU.
        AvgPool2d {
            name: "avg_pool2d", lane: Vision, signature: Params(AVG_POOL2D),
            functions: ["torch.nn.functional.avg_pool2d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_avg_pool",
        },
        /// 1-D adaptive average pooling to an output size, libtorch's kernel on CPU.
        AdaptiveAvgPool1d {
            name: "adaptive_avg_pool1d", lane: Vision, signature: Params(ADAPTIVE_POOL1D),
            functions: ["torch.nn.functional.adaptive_avg_pool1d", "torch.adaptive_avg_pool1d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_adaptive_avg_pool/tl_sum",
        },
        /// 2-D adaptive average pooling to an output size, libtorch's kernel on CPU.
        AdaptiveAvgPool2d {
            name: "adaptive_avg_pool2d", lane: Vision, signature: Params(ADAPTIVE_POOL2D),
            functions: ["torch.nn.functional.adaptive_avg_pool2d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_adaptive_avg_pool/tl_sum",
        },
        /// 2-D adaptive max pooling to an output size (values only), libtorch's kernel on CPU.
        AdaptiveMaxPool2d {
            name: "adaptive_max_pool2d", lane: Vision, signature: Params(ADAPTIVE_MAX_POOL2D),
            functions: ["torch.nn.functional.adaptive_max_pool2d"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_adaptive_max_pool",
        },
        /// Padding of the trailing dims (constant, reflect, replicate, circular), libtorch's kernel.
        Pad {
            name: "pad", lane: Vision, signature: Params(PAD),
            functions: ["torch.nn.functional.pad"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Batch normalization with running statistics (`training=False`), libtorch's kernel on CPU.
        BatchNorm {
            name: "batch_norm", lane: Norms, signature: Params(BATCH_NORM),
            functions: ["torch.nn.functional.batch_norm"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_add_scalar/tl_rsqrt/tl_sub/tl_mul/tl_add",
        },
        /// Group normalization, libtorch's kernel on CPU.
        GroupNorm {
            name: "group_norm", lane: Norms, signature: Params(GROUP_NORM),
            // `torch.group_norm` (the C++ op) is left out: the native op runs F.group_norm's
            // Python checks, which raise where the C++ op does not (one value per channel)
            functions: ["torch.nn.functional.group_norm"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "tl_layer_norm/tl_copy/tl_mul/tl_add",
        },
        /// The cross-entropy of class scores against int64 targets, per target
        /// (`reduction="none"`), libtorch's kernel.
        CrossEntropy {
            name: "cross_entropy", lane: Embedding, signature: Params(CROSS_ENTROPY),
            functions: ["torch.nn.functional.cross_entropy"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Rows of a weight matrix picked by int64 indices, libtorch's kernel.
        Embedding {
            name: "embedding", lane: Embedding, signature: Params(EMBEDDING),
            functions: ["torch.nn.functional.embedding"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Bags of weight rows reduced per bag (sum, mean or max), libtorch's kernel.
        EmbeddingBag {
            name: "embedding_bag", lane: Embedding, signature: Params(EMBEDDING_BAG),
            functions: ["torch.nn.functional.embedding_bag"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
    ],
}

/// Rows without a spelling of their own: the lane claims them through another row's spelling
/// and an option (`F.gelu(x, approximate="tanh")` is `GeluTanh`, not the exact `Gelu`).
pub const CLAIMED_THROUGH: &[(Op, &str)] = &[
    (Op::GeluTanh, "torch.nn.functional.gelu(x, approximate=\"tanh\")"),
    (Op::Conv1dPadding, "torch.nn.functional.conv1d(x, w, padding=\"same\")"),
    (Op::Conv2dPadding, "torch.nn.functional.conv2d(x, w, padding=\"same\")"),
    (Op::SumDims, "x.sum(dim=(0, 1), keepdim=True)"),
    (Op::MeanDims, "torch.mean(x, (0, 1), keepdim=True)"),
    (Op::SumAll, "x.sum()"),
    (Op::MeanAll, "torch.mean(x)"),
    (Op::MaxAll, "x.max()"),
    (Op::MinAll, "torch.min(x)"),
    (Op::ArgmaxAll, "x.argmax()"),
    (Op::ArgminAll, "torch.argmin(x)"),
    (Op::ProdAll, "x.prod()"),
    (Op::StdAll, "x.std()"),
    (Op::VarAll, "x.var(unbiased=False)"),
    (Op::ToDtype, "x.to(torch.int64)"),
    (Op::WhereNonzero, "torch.where(keep)[0]"),
    (Op::TensorOfInts, "torch.tensor([i for i in range(n) for j in range(i)])"),
    (Op::ClampTensor, "torch.clamp(x, min=x, max=x)"),
    (Op::PowTensor, "torch.pow(x, x)"),
    (Op::CategoricalProbs, "Categorical(logits=x).probs"),
    (Op::CategoricalLogProb, "Categorical(logits=x).log_prob(i)"),
    (Op::CategoricalEntropy, "Categorical(logits=x).entropy()"),
    (Op::CategoricalMode, "Categorical(logits=x).mode"),
    (Op::NormalLogProb, "Normal(x, x).log_prob(x)"),
    (Op::NormalEntropy, "Normal(x, x).entropy()"),
    (Op::NormalStddev, "Normal(x, x).stddev"),
];

impl Op {
    /// This op's row.
    pub fn info(self) -> &'static OpInfo {
        &TABLE[self as usize]
    }

    /// The backend function's name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The op claimed by the module-level function `path` (full dotted path).
    pub fn from_function(path: &str) -> Option<Op> {
        TABLE.iter().find(|row| row.functions.contains(&path)).map(|row| row.op)
    }

    /// The op claimed by the Tensor method `name`.
    pub fn from_method(name: &str) -> Option<Op> {
        TABLE.iter().find(|row| row.methods.contains(&name)).map(|row| row.op)
    }

    /// The op claimed by the binary operator `symbol` (`"+"`, `"@"`).
    pub fn from_operator(symbol: &str) -> Option<Op> {
        TABLE.iter().find(|row| row.operators.contains(&symbol)).map(|row| row.op)
    }

    /// The op whose lane rejects the module-level function `path` with a code.
    pub fn from_rejected_function(path: &str) -> Option<Op> {
        TABLE.iter().find(|row| row.rejected_functions.contains(&path)).map(|row| row.op)
    }

    /// The op whose lane rejects the Tensor method `name` with a code.
    pub fn from_rejected_method(name: &str) -> Option<Op> {
        TABLE.iter().find(|row| row.rejected_methods.contains(&name)).map(|row| row.op)
    }
}

impl Unary {
    pub fn info(self) -> &'static OpInfo {
        self.op().info()
    }

    pub fn name(self) -> &'static str {
        self.op().name()
    }
}

impl Binary {
    pub fn info(self) -> &'static OpInfo {
        self.op().info()
    }

    pub fn name(self) -> &'static str {
        self.op().name()
    }
}

/// Python's int `//` and `%` in 64 bits, one definition for both sides: the analyzer folds the
/// ints it knows while analysing with them, the backend's `tl::scalar` computes the others (and
/// turns `None` into CPython's exception).
pub mod python_int {
    /// `a // b`, rounded toward minus infinity; `None` for a zero divisor and for the one
    /// quotient beyond 64 bits (`i64::MIN // -1`).
    pub fn floor_div(a: i64, b: i64) -> Option<i64> {
        let quotient = a.checked_div(b)?;
        // Rust truncates toward zero: one step down when the exact quotient was negative and
        // not whole (a remainder with operands of opposite signs)
        Some(if a % b != 0 && ((a < 0) != (b < 0)) { quotient - 1 } else { quotient })
    }

    /// `a % b`, with the divisor's sign; `None` for a zero divisor.
    pub fn floor_mod(a: i64, b: i64) -> Option<i64> {
        if b == 0 {
            return None;
        }
        // i64::MIN % -1 is 0 but overflows Rust's `%`; |remainder| < |b|, so the sum cannot
        let remainder = a.wrapping_rem(b);
        Some(if remainder != 0 && ((remainder < 0) != (b < 0)) { remainder + b } else { remainder })
    }
}

/// Tensor methods that are recognised but never claimed, and why (the analyzer rejects them
/// with the code of the family). Not ops of the table: nothing lowers them.
pub mod unclaimed {
    /// Copies between devices or dtype conversions (TL205).
    pub const TRANSFER_METHODS: &[&str] =
        &["cuda", "cpu", "to", "double", "float", "half", "bfloat16", "long", "int", "type", "type_as"];
    /// Views and reshapes: results alias their base (TL206).
    pub const VIEW_METHODS: &[&str] = &[
        "movedim", "mT", "T", "H", "mH", "as_strided",
    ];
    /// Tensor attributes that are views of the tensor (TL206).
    pub const VIEW_ATTRIBUTES: &[&str] = &["T", "mT", "H", "mH", "real", "imag", "data"];
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rows_are_in_op_order() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.op as usize, i, "{:?}", row.op);
            assert_eq!(Op::ALL[i], row.op);
        }
        assert_eq!(Op::ALL.len(), TABLE.len());
        for (i, u) in Unary::ALL.iter().enumerate() {
            assert_eq!(*u as usize, i);
            assert_eq!(u.op().unary(), Some(*u));
        }
        for (i, b) in Binary::ALL.iter().enumerate() {
            assert_eq!(*b as usize, i);
            assert_eq!(b.op().binary(), Some(*b));
        }
    }

    #[test]
    fn every_row_is_complete() {
        for row in TABLE {
            assert!(!row.name.is_empty() && !row.doc.is_empty(), "{:?}: name and doc", row.op);
            assert!(
                !(row.functions.is_empty() && row.methods.is_empty() && row.operators.is_empty())
                    || CLAIMED_THROUGH.iter().any(|(op, _)| *op == row.op),
                "{:?} has no Python spelling",
                row.op
            );
            assert!(row.cuda_kernel.is_empty() || row.cuda_kernel == CUDA_VIEW || row.cuda_kernel.split('/').all(|k| k.starts_with("tl_")), "{:?}: CUDA kernel {}", row.op, row.cuda_kernel);
            // the unary ops are the `Signature::Unary` rows, and those bound by a Python
            // signature whose only other params are fixed (`F.silu`'s `inplace=False`)
            let fixed_options = match row.signature {
                Signature::Params(params) => params[0].name == "input" && params[1..].iter().all(|p| matches!(p.kind, Kind::Fixed(_))),
                _ => false,
            };
            assert!(row.signature != Signature::Unary || row.op.unary().is_some(), "{:?}", row.op);
            assert!(row.op.unary().is_none() || row.signature == Signature::Unary || fixed_options, "{:?}", row.op);
            assert_eq!(row.op.binary().is_some(), row.signature == Signature::Binary, "{:?}", row.op);
        }
    }

    #[test]
    fn names_and_spellings_are_unique() {
        let mut names = HashSet::new();
        let mut spellings = HashSet::new();
        for row in TABLE {
            assert!(names.insert(row.name), "backend name {} twice", row.name);
            let all = row.functions.iter().chain(row.rejected_functions).map(|f| ("fn", *f));
            let all = all.chain(row.methods.iter().chain(row.rejected_methods).map(|m| ("method", *m)));
            for spelling in all.chain(row.operators.iter().map(|o| ("op", *o))) {
                assert!(spellings.insert(spelling), "{spelling:?} claimed by two rows");
            }
            for m in row.methods.iter().chain(row.rejected_methods) {
                assert!(!unclaimed::TRANSFER_METHODS.contains(m) && !unclaimed::VIEW_METHODS.contains(m), "{m}");
            }
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(Op::from_function("torch.nn.functional.relu"), Some(Op::Relu));
        assert_eq!(Op::from_method("negative"), Some(Op::Neg));
        assert_eq!(Op::from_operator("@"), Some(Op::Matmul));
        assert_eq!(Op::from_method("true_divide"), Some(Op::Div));
        assert_eq!(Op::from_rejected_method("gelu"), Some(Op::Gelu));
        assert_eq!(Op::from_function("torch.subtract"), None);
        assert_eq!(Op::Linear.unary(), None);
        assert_eq!(Unary::Gelu.name(), "gelu");
    }
}
