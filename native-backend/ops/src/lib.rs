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
}

impl Lane {
    /// Every lane, in documentation order.
    pub const ALL: [Lane; 10] = [
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
    /// `f(&[&a, &b, …], dim)`: a list of tensors joined along a static dim.
    TensorList,
    /// `f(&x, &[shape], Option<&w>, Option<&b>, eps)`: `layer_norm`.
    LayerNorm,
    /// `f(&t, a, dim, n)`: a tensor split into parts that a statement unpacks into `n` names
    /// (`a, b = t.chunk(2, dim)`); `a` is the op's int argument (unused by `unbind`).
    Parts,
}

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

macro_rules! op_table {
    (
        unary: [$(
            $(#[doc = $udoc:literal])+
            $u:ident {
                name: $uname:literal, lane: $ulane:ident,
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
                name: $oname:literal, lane: $olane:ident, signature: $osig:ident,
                functions: [$($ofn:literal),*], methods: [$($om:literal),*], operators: [$($oop:literal),*],
                rejected_functions: [$($orf:literal),*], rejected_methods: [$($orm:literal),*],
                cuda: $ocuda:literal $(,)?
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
                op: Op::$u, name: $uname, lane: Lane::$ulane, signature: Signature::Unary,
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
                op: Op::$o, name: $oname, lane: Lane::$olane, signature: Signature::$osig,
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
    ],
    binary: [
        /// `a + b` with broadcasting.
        Add {
            name: "add", lane: Binops,
            functions: ["torch.add"], methods: [], operators: ["+"],
            rejected_functions: [], rejected_methods: ["add"],
            cuda: "tl_add",
        },
        /// `a - b` with broadcasting.
        Sub {
            name: "sub", lane: Binops,
            functions: ["torch.sub"], methods: [], operators: ["-"],
            rejected_functions: [], rejected_methods: ["sub", "subtract"],
            cuda: "tl_sub",
        },
        /// `a * b` with broadcasting.
        Mul {
            name: "mul", lane: Binops,
            functions: ["torch.mul"], methods: [], operators: ["*"],
            rejected_functions: [], rejected_methods: ["mul", "multiply"],
            cuda: "tl_mul",
        },
        /// `a / b`, true division with broadcasting.
        Div {
            name: "div", lane: Binops,
            functions: ["torch.div"], methods: [], operators: ["/"],
            rejected_functions: [], rejected_methods: ["div", "divide", "true_divide"],
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
            cuda: "",
        },
        /// `min(max(t, lo), hi)` with Python-number bounds, either optional.
        Clamp {
            name: "clamp", lane: Pointwise, signature: Clamp,
            functions: ["torch.clamp", "torch.clip"], methods: ["clamp", "clip"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `max(t, lo)` with a Python-number bound.
        ClampMin {
            name: "clamp_min", lane: Pointwise, signature: TensorNumber,
            functions: ["torch.clamp_min"], methods: ["clamp_min"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `min(t, hi)` with a Python-number bound.
        ClampMax {
            name: "clamp_max", lane: Pointwise, signature: TensorNumber,
            functions: ["torch.clamp_max"], methods: ["clamp_max"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `x · sigmoid(x)` (SiLU / swish), libtorch's kernel.
        Silu {
            name: "silu", lane: Pointwise, signature: Tensor,
            functions: ["torch.nn.functional.silu"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `1 / sqrt(x)`, libtorch's kernel.
        Rsqrt {
            name: "rsqrt", lane: Pointwise, signature: Tensor,
            functions: ["torch.rsqrt"], methods: ["rsqrt"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The error function, libtorch's kernel.
        Erf {
            name: "erf", lane: Pointwise, signature: Tensor,
            functions: ["torch.erf", "torch.special.erf"], methods: ["erf"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `log(1 + exp(x))` with eager's defaults (`beta=1`, `threshold=20`), libtorch's kernel.
        Softplus {
            name: "softplus", lane: Pointwise, signature: Tensor,
            functions: ["torch.nn.functional.softplus"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Layer normalization over the trailing dims, with optional affine weight and bias.
        LayerNorm {
            name: "layer_norm", lane: Norms, signature: LayerNorm,
            functions: ["torch.nn.functional.layer_norm", "torch.layer_norm"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Elementwise maximum of two tensors (NaN propagates), with broadcasting.
        Maximum {
            name: "maximum", lane: Pointwise, signature: Product,
            functions: ["torch.maximum"], methods: ["maximum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Elementwise minimum of two tensors (NaN propagates), with broadcasting.
        Minimum {
            name: "minimum", lane: Pointwise, signature: Product,
            functions: ["torch.minimum"], methods: ["minimum"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Batched matrix product of two rank-3 tensors (equal batches).
        Bmm {
            name: "bmm", lane: Binops, signature: Product,
            functions: ["torch.bmm"], methods: ["bmm"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A view with a new shape (`-1` inferred), as `Tensor.view`: an error where the
        /// strides do not allow one.
        View {
            name: "view", lane: Views, signature: IntList,
            functions: [], methods: ["view"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A new shape: a view where the strides allow one, else a copy (as eager).
        Reshape {
            name: "reshape", lane: Views, signature: IntList,
            functions: ["torch.reshape"], methods: ["reshape"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A broadcast view to a larger shape (`-1` keeps a size).
        Expand {
            name: "expand", lane: Views, signature: IntList,
            functions: [], methods: ["expand"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A broadcast view to another tensor's shape.
        ExpandAs {
            name: "expand_as", lane: Views, signature: Product,
            functions: [], methods: ["expand_as"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A view with the dims reordered.
        Permute {
            name: "permute", lane: Views, signature: IntList,
            functions: ["torch.permute"], methods: ["permute"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A view with two dims swapped.
        Transpose {
            name: "transpose", lane: Views, signature: DimPair,
            functions: ["torch.transpose"], methods: ["transpose"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The matrix transpose of a rank-2 tensor (a rank-1 tensor as it is), a view.
        T {
            name: "t", lane: Views, signature: Tensor,
            functions: ["torch.t"], methods: ["t"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// A view with a size-1 dim inserted.
        Unsqueeze {
            name: "unsqueeze", lane: Views, signature: Dim,
            functions: ["torch.unsqueeze"], methods: ["unsqueeze"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Dims `start..=end` merged into one (a view where possible, else a copy).
        Flatten {
            name: "flatten", lane: Views, signature: DimPair,
            functions: ["torch.flatten"], methods: ["flatten"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Basic indexing `t[…]` with ints, slices, `None` and `...`: a view.
        Index {
            name: "index", lane: Views, signature: Index,
            functions: [], methods: [], operators: ["[]"],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// `n` parts of (nearly) equal size along a dim, views, unpacked into names.
        Chunk {
            name: "chunk", lane: Views, signature: Parts,
            functions: ["torch.chunk"], methods: ["chunk"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Parts of a given size along a dim, views, unpacked into names.
        Split {
            name: "split", lane: Views, signature: Parts,
            functions: ["torch.split"], methods: ["split"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The slices along a dim (that dim removed), views, unpacked into names.
        Unbind {
            name: "unbind", lane: Views, signature: Parts,
            functions: ["torch.unbind"], methods: ["unbind"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Tensors of one shape but along `dim` joined along it (a copy).
        Cat {
            name: "cat", lane: Views, signature: TensorList,
            functions: ["torch.cat", "torch.concat", "torch.concatenate"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// Tensors of one shape stacked along a new dim (a copy).
        Stack {
            name: "stack", lane: Views, signature: TensorList,
            functions: ["torch.stack"], methods: [], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
        /// The tensor itself when contiguous, else a contiguous copy.
        Contiguous {
            name: "contiguous", lane: Views, signature: Tensor,
            functions: [], methods: ["contiguous"], operators: [],
            rejected_functions: [], rejected_methods: [],
            cuda: "",
        },
    ],
}

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

/// Tensor methods that are recognised but never claimed, and why (the analyzer rejects them
/// with the code of the family). Not ops of the table: nothing lowers them.
pub mod unclaimed {
    /// Copies between devices or dtype conversions (TL205).
    pub const TRANSFER_METHODS: &[&str] =
        &["cuda", "cpu", "to", "double", "float", "half", "bfloat16", "long", "int", "type", "type_as"];
    /// Views and reshapes: results alias their base (TL206).
    pub const VIEW_METHODS: &[&str] = &[
        "view_as", "reshape_as", "squeeze", "narrow", "select", "unfold", "movedim", "swapaxes",
        "swapdims", "mT", "T", "H", "mH", "detach", "unflatten", "as_strided",
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
                !(row.functions.is_empty() && row.methods.is_empty() && row.operators.is_empty()),
                "{:?} has no Python spelling",
                row.op
            );
            assert!(row.cuda_kernel.is_empty() || row.cuda_kernel.starts_with("tl_"), "{:?}: CUDA kernel {}", row.op, row.cuda_kernel);
            let elementwise = matches!(row.signature, Signature::Unary | Signature::Binary);
            assert_eq!(elementwise, row.op.unary().is_some() || row.op.binary().is_some(), "{:?}", row.op);
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
        assert_eq!(Op::from_rejected_method("true_divide"), Some(Op::Div));
        assert_eq!(Op::from_function("torch.subtract"), None);
        assert_eq!(Op::Linear.unary(), None);
        assert_eq!(Unary::Gelu.name(), "gelu");
    }
}
