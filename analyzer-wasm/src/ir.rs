//! The typed IR between the walk and lowering: a tree of claimed tensor ops and Python scalar
//! expressions, plus the statements around them. A function has an IR only when every part of
//! it is lowerable.
//!
//! The walk builds it with [`Expr::Tensor`] nodes only; the fusion pass ([`crate::fuse`])
//! then rewrites groups of them into [`Expr::Fused`] nodes and weight-tied layer loops into
//! [`Stmt::FusedLoop`], each naming the `tl::fused` kernel that computes it and the sites it
//! covers. Lowering ([`crate::lower`]) only prints the tree.

use crate::ty::{Device, Ty};
pub use torchlower_ops::{Binary, Op, Unary};

/// The longest `torch.einsum` equation claimed (real code writes `"bhwc,hkc->bhwk"`).
pub const EQUATION_BYTES: usize = 48;

impl Options {
    /// The einsum equation of [`Options::Equation`].
    pub fn equation(&self) -> Option<&str> {
        match self {
            Options::Equation { text, len } => std::str::from_utf8(&text[..usize::from(*len)]).ok(),
            _ => None,
        }
    }
}

/// The static options of a claimed op, as its backend function takes them
/// ([`torchlower_ops::Signature`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Options {
    None,
    /// `softmax(t, dim)`
    Dim(i64),
    /// `unsqueeze(t, dim)` with a dim known only at run time (a Python int): the op's second
    /// operand, checked by libtorch with eager's IndexError
    DynDim,
    /// `sum_dim(t, dim, keepdim)` & co.
    DimKeepdim(i64, bool),
    /// `transpose(t, d0, d1)`, `flatten(t, start, end)`: two normalised static dims
    DimPair(i64, i64),
    /// `clamp(t, min, max)`: which bounds are given (their values are the op's operands)
    Bounds(bool, bool),
    /// `layer_norm`: how many shape ints follow the input, and which of weight, bias and eps
    /// are given (in that order after them)
    LayerNorm { dims: u8, weight: bool, bias: bool, eps: bool },
    /// `chunk`/`split`/`unbind` over `dim`, unpacked into `count` names
    Parts { dim: i64, count: usize },
    /// the same over a dim known only at run time (the op's last operand)
    PartsDyn { count: usize },
    /// An op called through its Python signature (`Signature::Params`): which parameters
    /// were given (bit `i` for parameter `i`; their values are the op's operands, in order),
    /// and the index of the string given to its `Choice` parameter.
    Params { present: u32, choice: u8 },
    /// An arithmetic op with a Python number on the right (`t * 0.5` → `mul_scalar(t, s)`).
    ScalarRight,
    /// `torch.einsum`'s equation (checked ASCII, spaces removed), kept inline so the options
    /// stay `Copy`: at most [`EQUATION_BYTES`] bytes.
    Equation { text: [u8; EQUATION_BYTES], len: u8 },
    /// An arithmetic op with a Python number on the left (`1.0 - t` → `scalar_sub(s, t)`).
    ScalarLeft,
}

/// Python float arithmetic (`tl::scalar` for the checked ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    /// true division: `ZeroDivisionError` on a zero divisor
    Div,
    /// `**`: CPython's `float_pow` errors (a complex result, `0.0 ** -1`, overflow)
    Pow,
}

/// A `math` function of one float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathFn {
    /// `math.sqrt`: `ValueError` below zero
    Sqrt,
    /// `math.log` of one argument: `ValueError` at and below zero
    Log,
    /// `math.exp`: `OverflowError` when a finite argument overflows
    Exp,
    /// `math.log2`: `ValueError` at and below zero
    Log2,
    /// `math.floor` of a float, an int: CPython's errors for NaN and ±inf
    Floor,
    /// `math.ceil` of a float, an int: as `Floor`
    Ceil,
    /// `int(x)` / `math.trunc(x)` of a float, toward zero: as `Floor`
    Trunc,
}

/// Checked Python int arithmetic (`tl::scalar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    /// `**` with a non-negative literal exponent, or an int one known only at run time
    /// (`2 ** math.ceil(math.log2(n))`): a negative one, where Python gives a float, refuses
    Pow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// How a scalar is used: as an i64 or as a bool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    Int,
    Bool,
    Float,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// a local variable (Python name) of a lowerable type
    Local { name: String, ty: Ty },
    Int(i64),
    Bool(bool),
    Float(f64),
    /// A claimed op; `site` indexes the function's sites (for the site ↔ Rust link). For
    /// `Op::Linear`, a third operand is the bias.
    Tensor { site: usize, op: Op, options: Options, device: Device, args: Vec<Expr> },
    /// A group of claimed CPU ops computed by one `tl::fused` kernel.
    Fused { kernel: Fused, sites: Vec<usize> },
    /// int arithmetic on two int-valued operands
    Scalar { op: ScalarOp, left: Box<Expr>, right: Box<Expr> },
    /// -x on an int
    Neg(Box<Expr>),
    /// float arithmetic on two float-valued operands
    FloatArith { op: FloatOp, left: Box<Expr>, right: Box<Expr> },
    /// -x on a float
    FloatNeg(Box<Expr>),
    /// an int (or bool as int) as a Python float (`float(n)`, or an int operand of float
    /// arithmetic): correctly rounded, as CPython's `int.__float__`
    IntToFloat(Box<Expr>),
    /// an int compared with a float: converted only where exact (`tl::scalar::exact_float`)
    IntToFloatExact(Box<Expr>),
    /// `int / int`: true division, correctly rounded (`tl::scalar::int_true_div`)
    IntTrueDiv(Box<Expr>, Box<Expr>),
    /// `math.sqrt(x)` & co. on a float
    Math { f: MathFn, arg: Box<Expr> },
    /// Python's `min(a, b, …)` / `max(…)` of values of one scalar kind (the first extreme, as
    /// CPython's left-to-right comparisons keep it)
    Extreme { max: bool, kind: ScalarKind, items: Vec<Expr> },
    /// a returned tuple (`return a, b`): tuples are values only here
    Tuple(Vec<Expr>),
    /// `t.shape[dim]` / `t.size(dim)` of a tensor local, `dim` checked against the static rank
    Size { tensor: Box<Expr>, dim: usize },
    /// `t.numel()`
    Numel(Box<Expr>),
    /// `t.item()`: the one element of a tensor as a Python number of `kind` (float for
    /// float32, int for int64 / int32, bool for bool; eager's RuntimeError for another count)
    Item { kind: ScalarKind, tensor: Box<Expr> },
    /// `f(…)[i]`: element `i` of a module function's tuple result
    Field { tuple: Box<Expr>, index: usize },
    /// `h += x`, `h.relu_()`, `F.relu(h, inplace=True)` on a local whose storage is not a
    /// parameter's: `op` applied in place to `args[0]` (the local), the value being that local
    InPlace { site: usize, op: Op, options: Options, args: Vec<Expr> },
    /// `t.clamp_(max=…)`, `t.zero_()`, `t.sigmoid_()` … on a local whose storage is not a
    /// parameter's: `value` (the op computed out of place on `target` and Python numbers, its
    /// site claimed) written into `target`'s storage, the value being `target`
    /// (`tl::ops::write_into`). `kernel`: instead, `value`'s op is called as the backend's
    /// in-place function of the same arguments (`tl::ops::masked_fill_`: eager's kernel, whose
    /// broadcasting and errors differ from the out-of-place op's).
    WriteBack { target: Box<Expr>, value: Box<Expr>, kernel: bool },
    /// An in-place write into a tensor that may be a parameter (`x.mul_(y) if inplace else
    /// x * y`), on a branch taken only for some arguments: native code refuses when it is
    /// reached (a `ValueError`, so auto mode reruns Python, which writes as eager does).
    /// `args`: the tensor written into, then the write's tensor operands, computed first as
    /// Python computes them (a chain `x.add_(3.).clamp_(0., 6.)` nests, so the first write
    /// refuses); `what` names the write.
    Defer { site: usize, what: String, args: Vec<Expr> },
    /// `t[items]`, basic indexing (site `site`, op `Op::Index`)
    Index { site: usize, tensor: Box<Expr>, items: Vec<IndexItem> },
    /// `tensor[items] = value` in place (a statement's effect); `number`: the value is a
    /// Python number (a float expression)
    IndexPut { site: usize, tensor: Box<Expr>, items: Vec<IndexItem>, value: Box<Expr>, number: bool },
    /// `torch.tensor([elt for v0 in range(…) for v1 in range(…)])` (site `site`): the loops,
    /// outermost first, each `(variable, start, stop, step)` (later bounds may read earlier
    /// variables), and the int element; an int64 rank-1 tensor.
    IntComprehension { site: usize, loops: Vec<(String, Expr, Expr, Expr)>, elt: Box<Expr> },
    /// A call of another native function of the module (`function`: its index in the report),
    /// its arguments in parameter order.
    Call { function: usize, args: Vec<Expr> },
    /// `a if cond else b` (both of one type; only the branch taken runs)
    IfElse { cond: Box<Expr>, then: Box<Expr>, orelse: Box<Expr> },
    /// bool → int (`True + 1`)
    BoolToInt(Box<Expr>),
    /// int truthiness (`if n:` / `not n`)
    IntTruthy(Box<Expr>),
    /// `bool(t.all())` / `bool(t.any())` of a tensor (site `site`), as a condition reads it
    /// (`assert (boxes[:, 2:] >= boxes[:, :2]).all()`): a Python bool
    TensorTruth { site: usize, any: bool, tensor: Box<Expr> },
    Not(Box<Expr>),
    /// comparison chain; operands are all ints or all bools (`kind`)
    Compare { kind: ScalarKind, first: Box<Expr>, rest: Vec<(CmpOp, Expr)> },
    /// `and` / `or` over bools
    BoolOp { and: bool, values: Vec<Expr> },
}

/// One item of a basic index expression (`tl::index::Item`).
#[derive(Debug, Clone, PartialEq)]
pub enum IndexItem {
    Int(Expr),
    Slice(Option<Expr>, Option<Expr>, Option<Expr>),
    NewAxis,
    Ellipsis,
    /// an int64 index tensor or a bool mask (advanced indexing)
    Tensor(Expr),
    /// a list of ints (advanced indexing with a rank-1 index)
    List(Vec<Expr>),
}

impl IndexItem {
    /// The int expressions of the item.
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            IndexItem::Int(e) => vec![e],
            IndexItem::Slice(a, b, c) => [a, b, c].into_iter().flatten().collect(),
            IndexItem::Tensor(e) => vec![e],
            IndexItem::List(items) => items.iter().collect(),
            IndexItem::NewAxis | IndexItem::Ellipsis => Vec::new(),
        }
    }
}

/// A sum or mean over one static dim, applied by a fused kernel (`tl::fused::Reduce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduce {
    pub mean: bool,
    pub dim: i64,
    pub keepdim: bool,
}

/// One instruction of an elementwise program (`tl::fused::Step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Load(usize),
    Unary(Unary),
    Binary(Binary),
}

/// The product at the root of an epilogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    /// `F.linear(x, w, b?)` → `tl::fused::linear_epilogue`
    Linear,
    /// `x @ w` or `x @ w + b` → `tl::fused::matmul_epilogue`
    Matmul,
}

/// What a [`Expr::Fused`] node computes.
#[derive(Debug, Clone, PartialEq)]
pub enum Fused {
    /// `reduce?(acts(product(x, w) + b?))`
    Epilogue { product: Product, x: Box<Expr>, w: Box<Expr>, b: Option<Box<Expr>>, acts: Vec<Unary>, reduce: Option<Reduce> },
    /// A chain of elementwise ops over `operands` (in order of first use): tensor locals, and
    /// tensor expressions evaluated before the chain (see [`crate::fuse`] for when that keeps
    /// Python's order).
    Elementwise { operands: Vec<Expr>, program: Vec<Step> },
    /// A lone sum/mean of a tensor local.
    Reduce { input: Box<Expr>, reduce: Reduce },
    /// `acts(input)` where `input` is an op whose result is a fresh tensor nothing else holds
    /// (a convolution's, a norm's): the ops run in place on it.
    Acts { input: Box<Expr>, acts: Vec<Unary> },
    /// The hand-written RMSNorm `input * rsqrt(input.pow(2).mean(-1, keepdim=True) + eps)`,
    /// then `* weight` (on the left when `weight_left`): `input` and `weight` tensor locals,
    /// `eps` a Python number.
    RmsNorm { input: Box<Expr>, eps: Box<Expr>, weight: Option<Box<Expr>>, weight_left: bool },
    /// `input * number` or `input / number` (`op`), `input` a fused product (its result a
    /// fresh tensor nothing else holds) and `number` a Python int or float: scaled in place
    /// (attention's `(q @ kᵀ) * scale`).
    Scale { input: Box<Expr>, op: Binary, number: Box<Expr> },
    /// Statements `v = acts(F.conv2d(u, …))` each reading the previous one's result, then
    /// maybe `v = F.max_pool2d(v, …)` (LeNet/VGG-style feature stacks), or the same nested in
    /// one expression (an inlined `nn.Sequential`): one value flowing
    /// through `stages` from `input`, kept in oneDNN's layout between them where eager runs
    /// oneDNN (`tl::fused::ConvChain`).
    ConvChain { input: Box<Expr>, stages: Vec<ConvStage>, pool: Option<Box<Expr>> },
}

/// One convolution of a [`Fused::ConvChain`]: the claimed `conv2d` op (its first operand an
/// empty tuple: the chain holds that value) and the activations after it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvStage {
    pub conv: Expr,
    pub acts: Vec<Unary>,
}

impl Fused {
    /// The `tl::fused` function that computes it (also the report's `fused_into`).
    pub fn kernel_name(&self) -> &'static str {
        match self {
            Fused::Epilogue { product: Product::Linear, .. } => "linear_epilogue",
            Fused::Epilogue { product: Product::Matmul, .. } => "matmul_epilogue",
            Fused::Elementwise { .. } => "elementwise",
            Fused::Reduce { .. } => "reduce",
            Fused::Acts { .. } => "acts_in_place",
            Fused::RmsNorm { .. } => "rms_norm",
            Fused::Scale { .. } => "scale",
            Fused::ConvChain { .. } => "conv_chain",
        }
    }
}

/// The activation choice of a fused layer loop: a fixed chain, or a scalar `if` choosing.
#[derive(Debug, Clone, PartialEq)]
pub enum ActTree {
    Chain(Vec<Unary>),
    Branch { cond: Expr, then: Box<ActTree>, orelse: Box<ActTree> },
}

/// Where the result of a fused layer loop goes.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopResult {
    /// back into the carried local (`iterate_matmul_epilogue`)
    Hidden,
    /// reduced, then assigned to this local (`iterate_matmul_reduce`)
    Assign(String),
    /// reduced, then returned (`iterate_matmul_reduce`)
    Return,
}

/// A weight-tied layer loop `for var in range(start, stop, step): hidden = acts(hidden @ weight
/// + bias)`, optionally followed by the reduction of its result, as one kernel call.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedLoop {
    pub hidden: String,
    pub weight: String,
    pub bias: Option<Expr>,
    pub var: String,
    /// the per-path temporaries `t` of `t = h @ W + B; h = acts(t)`, dead after the loop
    pub temps: Vec<String>,
    pub start: Expr,
    pub stop: Expr,
    pub step: Expr,
    pub acts: ActTree,
    /// the reduction of the loop's result, present unless `result` is [`LoopResult::Hidden`]
    pub reduce: Option<Reduce>,
    pub result: LoopResult,
    pub sites: Vec<usize>,
}

impl FusedLoop {
    pub fn kernel_name(&self) -> &'static str {
        if self.reduce.is_some() {
            "iterate_matmul_reduce"
        } else {
            "iterate_matmul_epilogue"
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Assign { name: String, ty: Ty, value: Expr },
    If { cond: Expr, then: Vec<Stmt>, orelse: Vec<Stmt> },
    For { var: String, start: Expr, stop: Expr, step: Expr, body: Vec<Stmt> },
    While { cond: Expr, body: Vec<Stmt> },
    /// `break` / `continue` of the innermost `For`/`While`
    Break,
    Continue,
    Return(Expr),
    /// an expression statement made for its effect: an in-place op (`h.relu_()`)
    Effect(Expr),
    /// `assert cond[, message]`: `AssertionError` when `cond` is false; the message (a string
    /// literal or an f-string of ints) is formatted only then, as Python evaluates it
    Assert { cond: Expr, message: Option<Vec<MessagePart>> },
    /// `raise E` / `raise E(message)` of a builtin exception class: native code raises the
    /// same exception with the same text (the message as `assert`'s)
    Raise { exception: Exception, message: Option<Vec<MessagePart>> },
    /// `a, b = t.chunk(2, dim)` & co.: `value` is the parts op (`Options::Parts`), each name
    /// gets one part; or `a, b = f(…)` of a module function returning a tuple (`tuple`)
    Unpack { names: Vec<(String, Ty)>, value: Expr, tuple: bool },
    FusedLoop(Box<FusedLoop>),
}

impl Stmt {
    /// `return None` of a function that returns None: the unit, which Python gets as None.
    pub fn return_none() -> Stmt {
        Stmt::Return(Expr::Tuple(Vec::new()))
    }
}

/// The builtin exception classes a `raise` in native code may name, each raised as itself
/// (`tl::Error::<variant>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exception {
    Value,
    Type,
    Runtime,
    Index,
    NotImplemented,
    Assertion,
}

impl Exception {
    pub fn from_builtin(name: &str) -> Option<Exception> {
        Some(match name {
            "ValueError" => Exception::Value,
            "TypeError" => Exception::Type,
            "RuntimeError" => Exception::Runtime,
            "IndexError" => Exception::Index,
            "NotImplementedError" => Exception::NotImplemented,
            "AssertionError" => Exception::Assertion,
            _ => return None,
        })
    }

    /// The backend's `tl::Error` variant that raises it.
    pub fn variant(self) -> &'static str {
        match self {
            Exception::Value => "Value",
            Exception::Type => "Type",
            Exception::Runtime => "Runtime",
            Exception::Index => "Index",
            Exception::NotImplemented => "NotImplemented",
            Exception::Assertion => "Assertion",
        }
    }
}

/// A piece of an `assert` message: literal text, or a Python int formatted as `str(n)`.
#[derive(Debug, Clone, PartialEq)]
pub enum MessagePart {
    Text(String),
    Int(Expr),
}

/// A native function ready for lowering.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub params: Vec<(String, Ty)>,
    pub returns: Ty,
    /// the element types when `returns` is a tuple
    pub returns_tuple: Vec<Ty>,
    /// the Python type its returned pair has (a tuple, or eager's `torch.return_types` one)
    pub returned_pair: ReturnedPair,
    /// it writes into its tensor arguments as eager does (TL212): the body says so to the
    /// entry (`tl::wrote_arguments`), which refuses arguments that require grad
    pub writes_arguments: bool,
    pub body: Vec<Stmt>,
    /// a function with `Optional[<marker>]` parameters: no body of its own, its entry runs the
    /// copy walked for the call's None / tensor combination
    pub dispatch: Option<Dispatch>,
}

/// Which copy of a function runs for which of its `Optional[<marker>]` parameters are None
/// (`walk::optional`): the parameters' positions, and per combination (bit `i` set: the
/// `i`-th optional parameter is a tensor) the copy's report index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    pub optional: Vec<usize>,
    pub copies: Vec<usize>,
}

/// What Python type a function's returned pair is: eager returns `x.max(dim)`, `topk`, `sort`
/// as a `torch.return_types` tuple subclass (with `.values` / `.indices`), every other tuple
/// as a plain one. The body returns a Rust tuple either way; the entry builds the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReturnedPair {
    /// a plain tuple (or no tuple at all)
    #[default]
    Tuple,
    /// `torch.return_types.<name>`: an op's `(values, indices)` pair returned as it came
    Record(&'static str),
    /// what the module function (report index) whose call it returns as is returns
    Of(usize),
}

impl Function {
    /// Every `(site, kernel)` of the fused nodes, for the report's `fused_into`.
    pub fn fused_sites(&self) -> Vec<(usize, &'static str)> {
        let mut out = Vec::new();
        stmts_fused_sites(&self.body, &mut out);
        out
    }
}

fn stmts_fused_sites(body: &[Stmt], out: &mut Vec<(usize, &'static str)>) {
    for s in body {
        match s {
            Stmt::Assign { value, .. } | Stmt::Return(value) | Stmt::Assert { cond: value, .. } | Stmt::Unpack { value, .. } | Stmt::Effect(value) => {
                expr_fused_sites(value, out)
            }
            Stmt::If { cond, then, orelse } => {
                expr_fused_sites(cond, out);
                stmts_fused_sites(then, out);
                stmts_fused_sites(orelse, out);
            }
            Stmt::For { start, stop, step, body, .. } => {
                [start, stop, step].into_iter().for_each(|e| expr_fused_sites(e, out));
                stmts_fused_sites(body, out);
            }
            Stmt::While { cond, body } => {
                expr_fused_sites(cond, out);
                stmts_fused_sites(body, out);
            }
            Stmt::Raise { .. } | Stmt::Break | Stmt::Continue => {}
            Stmt::FusedLoop(l) => out.extend(l.sites.iter().map(|&s| (s, l.kernel_name()))),
        }
    }
}

fn expr_fused_sites(e: &Expr, out: &mut Vec<(usize, &'static str)>) {
    e.visit(&mut |e| {
        if let Expr::Fused { kernel, sites } = e {
            out.extend(sites.iter().map(|&s| (s, kernel.kernel_name())));
        }
    });
}

impl Expr {
    /// Calls `f` on this expression and every expression inside it (pre-order).
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Local { .. } | Expr::Int(_) | Expr::Bool(_) | Expr::Float(_) => {}
            Expr::Tensor { args, .. } => args.iter().for_each(|a| a.visit(f)),
            Expr::Fused { kernel, .. } => match kernel {
                Fused::Epilogue { x, w, b, .. } => {
                    x.visit(f);
                    w.visit(f);
                    if let Some(b) = b {
                        b.visit(f);
                    }
                }
                Fused::Elementwise { operands, .. } => operands.iter().for_each(|o| o.visit(f)),
                Fused::Reduce { input, .. } | Fused::Acts { input, .. } => input.visit(f),
                Fused::Scale { input, number, .. } => {
                    input.visit(f);
                    number.visit(f);
                }
                Fused::RmsNorm { input, eps, weight, .. } => {
                    input.visit(f);
                    eps.visit(f);
                    if let Some(w) = weight {
                        w.visit(f);
                    }
                }
                Fused::ConvChain { input, stages, pool } => {
                    input.visit(f);
                    stages.iter().for_each(|stage| stage.conv.visit(f));
                    if let Some(pool) = pool {
                        pool.visit(f);
                    }
                }
            },
            Expr::Scalar { left, right, .. } | Expr::FloatArith { left, right, .. } | Expr::IntTrueDiv(left, right) => {
                left.visit(f);
                right.visit(f);
            }
            Expr::Neg(inner)
            | Expr::BoolToInt(inner)
            | Expr::IntTruthy(inner)
            | Expr::TensorTruth { tensor: inner, .. }
            | Expr::Not(inner)
            | Expr::FloatNeg(inner)
            | Expr::IntToFloat(inner)
            | Expr::IntToFloatExact(inner) => {
                inner.visit(f)
            }
            Expr::Math { arg, .. } => arg.visit(f),
            Expr::IntComprehension { loops, elt, .. } => {
                for (_, start, stop, step) in loops {
                    start.visit(f);
                    stop.visit(f);
                    step.visit(f);
                }
                elt.visit(f);
            }
            Expr::Extreme { items, .. } => items.iter().for_each(|e| e.visit(f)),
            Expr::Tuple(items) | Expr::Call { args: items, .. } | Expr::InPlace { args: items, .. } | Expr::Defer { args: items, .. } => {
                items.iter().for_each(|e| e.visit(f))
            }
            Expr::WriteBack { target, value, .. } => {
                target.visit(f);
                value.visit(f);
            }
            Expr::Index { tensor, items, .. } => {
                tensor.visit(f);
                items.iter().flat_map(IndexItem::exprs).for_each(|e| e.visit(f));
            }
            Expr::IndexPut { tensor, items, value, .. } => {
                tensor.visit(f);
                items.iter().flat_map(IndexItem::exprs).for_each(|e| e.visit(f));
                value.visit(f);
            }
            Expr::Size { tensor, .. } | Expr::Numel(tensor) | Expr::Item { tensor, .. } => tensor.visit(f),
            Expr::Field { tuple, .. } => tuple.visit(f),
            Expr::IfElse { cond, then, orelse } => {
                cond.visit(f);
                then.visit(f);
                orelse.visit(f);
            }
            Expr::Compare { first, rest, .. } => {
                first.visit(f);
                rest.iter().for_each(|(_, r)| r.visit(f));
            }
            Expr::BoolOp { values, .. } => values.iter().for_each(|v| v.visit(f)),
        }
    }
}
