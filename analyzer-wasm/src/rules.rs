//! THE registry: every claim rule id and every diagnostic code, with summary, explanation,
//! example and hint. Analysis code refers to rules and codes only through the statics below;
//! `docs/rules.md` is generated from [`ALL_RULES`] and [`ALL_CODES`] (see [`rules_markdown`]).
//!
//! Long on purpose: one registry, read top to bottom like ruff's `codes.rs`; each rule and code
//! is a few lines of text, and splitting the texts by lane would scatter the one list.

use crate::report::Severity;
use serde::Serialize;

pub use torchlower_ops::{Lane, Op};

/// A claim rule: a site that matches it runs natively, lowered to `op` (a row of the op
/// table, which also gives the rule's lane).
#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    pub op: Op,
    pub summary: &'static str,
    pub explanation: &'static str,
    pub example: &'static str,
    pub hint: &'static str,
    /// Beyond the seed surface (documented extension with eager semantics unchanged).
    pub extension: bool,
}

/// Area a diagnostic code belongs to (the hundreds digit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    Module,
    Signature,
    Site,
    Linear,
    Activations,
    Gelu,
    Binops,
    Reductions,
    Classification,
    Statement,
    Return,
}

impl Area {
    pub fn title(self) -> &'static str {
        match self {
            Area::Module => "module (syntax, limits)",
            Area::Signature => "signature and annotations",
            Area::Site => "torch sites, all lanes",
            Area::Linear => "linear lane",
            Area::Activations => "activation and unary lanes",
            Area::Gelu => "GELU lane",
            Area::Binops => "binary operation and matmul lane",
            Area::Reductions => "reduction lane",
            Area::Classification => "classification lane",
            Area::Statement => "statements and scalar expressions",
            Area::Return => "returns",
        }
    }
}

/// A diagnostic code: why a site is rejected or why a function falls back.
#[derive(Debug, Serialize)]
pub struct Code {
    pub code: &'static str,
    pub area: Area,
    #[serde(skip)]
    pub severity: Severity,
    pub summary: &'static str,
    pub explanation: &'static str,
    pub example: &'static str,
    pub hint: &'static str,
}

/// Extensions beyond the seed that are not rules by themselves (they widen where rules apply).
#[derive(Debug, Serialize)]
pub struct Extension {
    pub id: &'static str,
    pub summary: &'static str,
    pub explanation: &'static str,
    pub example: &'static str,
}

impl Rule {
    /// The claim lane, from the op table.
    pub fn lane(&self) -> Lane {
        self.op.info().lane
    }
}

/// The registry JSON's shape of a rule: the lane by its id, the op by its backend name.
impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Rule", 8)?;
        s.serialize_field("id", self.id)?;
        s.serialize_field("lane", self.lane().id())?;
        s.serialize_field("op", self.op.name())?;
        s.serialize_field("summary", self.summary)?;
        s.serialize_field("explanation", self.explanation)?;
        s.serialize_field("example", self.example)?;
        s.serialize_field("hint", self.hint)?;
        s.serialize_field("extension", &self.extension)?;
        s.end()
    }
}

macro_rules! rule {
    ($name:ident, $id:literal, $op:ident, $ext:literal, $summary:literal, $expl:literal, $ex:literal) => {
        pub static $name: Rule = Rule {
            id: $id,
            op: Op::$op,
            summary: $summary,
            explanation: $expl,
            example: $ex,
            hint: "",
            extension: $ext,
        };
    };
}

macro_rules! code {
    ($name:ident, $code:literal, $area:ident, $sev:ident, $summary:literal, $expl:literal, $ex:literal, $hint:literal) => {
        pub static $name: Code = Code {
            code: $code,
            area: Area::$area,
            severity: Severity::$sev,
            summary: $summary,
            explanation: $expl,
            example: $ex,
            hint: $hint,
        };
    };
}

// ---------------------------------------------------------------------------------------------
// Claim rules
// ---------------------------------------------------------------------------------------------

rule!(LINEAR_BIAS, "torchlower/functional-linear-f32-2d", Linear, false,
    "torch.nn.functional.linear with a rank-1 tensor bias",
    "Three positional float32 tensors: input and weight of rank 2, bias of rank 1, all on one device. Result: float32 rank 2. Lowers to `ops::linear(x, w, Some(b))`.",
    "F.linear(x, w, b)  # x, w: TensorF32Cpu2D, b: TensorF32Cpu1D");
rule!(LINEAR_NONE, "torchlower/functional-linear-none-f32-2d", Linear, false,
    "torch.nn.functional.linear without bias",
    "Input and weight positional float32 rank-2 tensors; the bias omitted, a positional literal `None` or the keyword `bias=None`. Result: float32 rank 2.",
    "F.linear(x, w)  /  F.linear(x, w, None)  /  F.linear(x, w, bias=None)");
rule!(LINEAR_BIAS_KEYWORD, "torchlower/functional-linear-bias-keyword-f32-2d", Linear, true,
    "EXTENSION: torch.nn.functional.linear with a tensor-valued `bias=` keyword",
    "Same as the positional form; the bias is passed as the keyword `bias=b` (a rank-1 float32 tensor). Eager PyTorch treats both spellings identically, so the lowering is the same `ops::linear(x, w, Some(b))`.",
    "F.linear(x, w, bias=b)");

rule!(TENSOR_RELU, "torchlower/tensor-relu-f32-rank1-2", Relu, false,
    "Tensor.relu() on a rank-1 or rank-2 float32 tensor",
    "Zero-argument, out-of-place method; the result has the receiver's rank.",
    "h.relu()");
rule!(TENSOR_SIGMOID, "torchlower/tensor-sigmoid-f32-rank1-2", Sigmoid, false,
    "Tensor.sigmoid() on a rank-1 or rank-2 float32 tensor",
    "Zero-argument, out-of-place method; the result has the receiver's rank.",
    "h.sigmoid()");
rule!(TENSOR_TANH, "torchlower/tensor-tanh-f32-rank1-2", Tanh, false,
    "Tensor.tanh() on a rank-1 or rank-2 float32 tensor",
    "Zero-argument, out-of-place method; the result has the receiver's rank.",
    "h.tanh()");
rule!(FUNCTION_RELU, "torchlower/function-relu-f32-rank1-2", Relu, false,
    "torch.relu(t)",
    "Exactly one positional rank-1/2 float32 tensor and no keywords; the result has the input's rank.",
    "torch.relu(h)");
rule!(FUNCTION_SIGMOID, "torchlower/function-sigmoid-f32-rank1-2", Sigmoid, false,
    "torch.sigmoid(t)",
    "Exactly one positional rank-1/2 float32 tensor and no keywords; the result has the input's rank.",
    "torch.sigmoid(h)");
rule!(FUNCTION_TANH, "torchlower/function-tanh-f32-rank1-2", Tanh, false,
    "torch.tanh(t)",
    "Exactly one positional rank-1/2 float32 tensor and no keywords; the result has the input's rank.",
    "torch.tanh(h)");
rule!(FUNCTIONAL_RELU, "torchlower/functional-relu-f32-rank1-2", Relu, false,
    "torch.nn.functional.relu(t) with inplace omitted or literal False",
    "One positional rank-1/2 float32 tensor; the only keyword allowed is the literal `inplace=False`. The result has the input's rank.",
    "F.relu(h)  /  F.relu(h, inplace=False)");

rule!(UNARY_ABS, "torchlower/unary-abs-f32-rank1-2", Abs, false,
    "torch.abs(t) / t.abs()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank.", "torch.abs(h)  /  h.abs()");
rule!(UNARY_NEG, "torchlower/unary-neg-f32-rank1-2", Neg, false,
    "torch.neg(t) / t.neg()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank.", "torch.neg(h)  /  h.neg()");
rule!(UNARY_NEGATIVE, "torchlower/unary-negative-f32-rank1-2", Neg, false,
    "torch.negative(t) / t.negative()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank (lowers to `ops::neg`).", "torch.negative(h)");
rule!(NEG_OPERATOR, "torchlower/tensor-neg-operator", Neg, true,
    "EXTENSION: -t on a float32 tensor", "Python's unary minus on a tensor is eager's `torch.neg` (signed zeros and NaN as eager); the result has the tensor's type.", "-x");
rule!(INT64_SIGN, "torchlower/abs-neg-int64", Abs, true,
    "EXTENSION: torch.abs(t) / t.abs() / torch.neg(t) / t.neg() / -t on an int64 tensor",
    "An int64 CPU tensor of any rank: libtorch's int64 kernels (the most negative int64 maps to itself, as in eager); the result has the tensor's type.",
    "relative_position = torch.abs(relative_position)  /  -torch.min(rp, torch.zeros_like(rp))");
rule!(RELU_IN_PLACE, "torchlower/relu-in-place-fresh", Relu, true,
    "EXTENSION: h.relu_() / F.relu(h, inplace=True) on a fresh local",
    "Claimed when `h` is a local whose storage is provably not a parameter's (the result of a claimed op that allocates, or a view of one): the change cannot be seen by the caller, and it is made in place, as eager makes it. On a parameter, or a view of one, it stays rejected (TL203).",
    "h = F.linear(x, w, b)\nh.relu_()");
rule!(UNARY_SQUARE, "torchlower/unary-square-f32-rank1-2", Square, false,
    "torch.square(t) / t.square()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank.", "torch.square(h)");
rule!(UNARY_EXP, "torchlower/unary-exp-f32-rank1-2", Exp, false,
    "torch.exp(t) / t.exp()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank.", "torch.exp(h)");
rule!(UNARY_LOG, "torchlower/unary-log-f32-rank1-2", Log, false,
    "torch.log(t) / t.log()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank (NaN/-inf exactly as eager).", "torch.log(h)");
rule!(UNARY_SQRT, "torchlower/unary-sqrt-f32-rank1-2", Sqrt, false,
    "torch.sqrt(t) / t.sqrt()", "One rank-1/2 float32 tensor, no other arguments; result of the same rank (NaN exactly as eager).", "torch.sqrt(h)");

rule!(GELU_NONE, "torchlower/functional-gelu-none-f32-rank1-2", Gelu, false,
    "torch.nn.functional.gelu(t) with the exact (erf) formula",
    "One positional rank-1/2 float32 tensor; `approximate` omitted or the keyword literal \"none\". The lowering always uses \"none\"; the source string is never interpolated.",
    "F.gelu(h)  /  F.gelu(h, approximate=\"none\")");

rule!(MATMUL_OP_2D, "torchlower/tensor-matmul-f32-2d", Matmul, false,
    "a @ b with two rank-2 tensors", "Result rank 2; inner sizes are checked by libtorch at run time.", "x @ w");
rule!(MATMUL_OP_MIXED, "torchlower/tensor-matmul-f32-mixed-rank", Matmul, false,
    "a @ b with one rank-2 and one rank-1 tensor (either order)", "Result rank 1 (matrix-vector or vector-matrix product).", "x @ v  /  v @ x");
rule!(MATMUL_CALL_2D, "torchlower/tensor-matmul-call-f32-2d", Matmul, false,
    "torch.matmul(a, b) / a.matmul(b) with two rank-2 tensors", "Two positional tensors for the function, one for the method; no keywords. Result rank 2.", "torch.matmul(x, w)  /  x.matmul(w)");
rule!(MATMUL_CALL_MIXED, "torchlower/tensor-matmul-call-f32-mixed-rank", Matmul, false,
    "torch.matmul(a, b) / a.matmul(b) with one rank-2 and one rank-1 tensor", "Either order; no keywords. Result rank 1.", "torch.matmul(x, v)");
rule!(ADD_SAME, "torchlower/tensor-add-f32-same-rank", Add, false,
    "a + b with two tensors of the same rank", "Float32 tensors of rank 1/1 or 2/2 on one device; result of that rank.", "h + h");
rule!(ADD_BCAST, "torchlower/tensor-add-f32-2d-1d-broadcast", Add, false,
    "a + b with one rank-2 and one rank-1 tensor (either order)", "Trailing-dimension broadcast; result rank 2.", "x @ w + b");
rule!(INT64_ELEMENTWISE, "torchlower/tensor-arith-int64", Add, true,
    "EXTENSION: a + b, a - b, a * b, a / b with an int64 or int32 tensor (operators, torch.add & co., methods)",
    "Two CPU tensors, an integer one (int64, int32) and an integer or float32 one, broadcast as eager: integer `+ - *` integer is the wider integer dtype (int32 with int32 stays int32; libtorch's kernels, which wrap on overflow as eager's do), `/` and a float32 operand give float32. With a Python number: torchlower/tensor-arith-int64-number.",
    "F.embedding(x + category_offsets[None], weight)");
rule!(INT64_NUMBER, "torchlower/tensor-arith-int64-number", Add, true,
    "EXTENSION: an int64 or int32 tensor with a Python number in `+ - * /` (either side; operators, torch.add & co., methods)",
    "A CPU integer tensor of any rank: an int with `+ - *` keeps its dtype (libtorch's kernel with an integer scalar, which wraps on overflow as eager's does); `/` or a float gives float32, torch's default dtype. `1 - t` is `torch.rsub`, `2 / t` is `t.reciprocal() * 2`, as in eager.",
    "max_exact + (torch.log(rp.float() / max_exact) * scale).to(torch.long)  /  positions + past_length");
rule!(SUB_SAME, "torchlower/tensor-sub-f32-same-rank", Sub, false,
    "a - b with two tensors of the same rank", "Float32 tensors of rank 1/1 or 2/2; result of that rank.", "a - b");
rule!(SUB_BCAST, "torchlower/tensor-sub-f32-2d-1d-broadcast", Sub, false,
    "a - b with one rank-2 and one rank-1 tensor (either order)", "Result rank 2.", "x - b");
rule!(MUL_SAME, "torchlower/tensor-mul-f32-same-rank", Mul, false,
    "a * b with two tensors of the same rank", "Float32 tensors of rank 1/1 or 2/2; result of that rank.", "a * b");
rule!(MUL_BCAST, "torchlower/tensor-mul-f32-2d-1d-broadcast", Mul, false,
    "a * b with one rank-2 and one rank-1 tensor (either order)", "Result rank 2.", "x * scale");
rule!(DIV_SAME, "torchlower/tensor-div-f32-same-rank", Div, false,
    "a / b (true division) with two tensors of the same rank", "Tensor-tensor true division; result of that rank.", "a / b");
rule!(DIV_BCAST, "torchlower/tensor-div-f32-2d-1d-broadcast", Div, false,
    "a / b (true division) with one rank-2 and one rank-1 tensor", "Result rank 2.", "x / divisor");
rule!(ADD_SCALAR, "torchlower/tensor-add-scalar-f32", Add, true,
    "EXTENSION: a + s / s + a / torch.add(a, s) with a Python int or float",
    "A float32 tensor of any rank and a Python number (literal, `float`/`int` parameter or local, module constant, scalar expression); the result has the tensor's type. Lowers to `ops::add_scalar(t, s)` (eager's wrapped-number scalar: an int stays an int) or, number first, `ops::scalar_add(s, t)`.",
    "h + 1.0  /  1 + h  /  torch.add(h, eps)");
rule!(SUB_SCALAR, "torchlower/tensor-sub-scalar-f32", Sub, true,
    "EXTENSION: a - s / s - a / torch.sub(a, s) with a Python number",
    "As for `+`; `s - t` is eager's `torch.rsub(t, s)` (`ops::scalar_sub`).",
    "1.0 - gate");
rule!(MUL_SCALAR, "torchlower/tensor-mul-scalar-f32", Mul, true,
    "EXTENSION: a * s / s * a / torch.mul(a, s) with a Python number",
    "As for `+`.",
    "0.5 * x  /  x * scale");
rule!(DIV_SCALAR, "torchlower/tensor-div-scalar-f32", Div, true,
    "EXTENSION: a / s / s / a / torch.div(a, s) with a Python number",
    "As for `+`; `s / t` is eager's `t.reciprocal() * s` (Tensor.__rtruediv__), not an elementwise `s / t`, and lowers the same way (`ops::scalar_div`).",
    "scores / math.sqrt(d)  /  1.0 / x");
rule!(ADD_IN_PLACE, "torchlower/add-in-place-fresh", Add, true,
    "EXTENSION: h += y / h.add_(y) on a fresh local",
    "As for relu_: `h` provably aliases no parameter; `y` a tensor that broadcasts to `h`'s type or a Python number; made in place (eager's errors when the result would not fit `h`).",
    "h = x @ w\nh += b");
rule!(SUB_IN_PLACE, "torchlower/sub-in-place-fresh", Sub, true, "EXTENSION: h -= y / h.sub_(y) on a fresh local", "As for `+=`.", "h -= mean");
rule!(MUL_IN_PLACE, "torchlower/mul-in-place-fresh", Mul, true, "EXTENSION: h *= y / h.mul_(y) on a fresh local", "As for `+=`.", "h.mul_(scale)");
rule!(DIV_IN_PLACE, "torchlower/div-in-place-fresh", Div, true, "EXTENSION: h /= y / h.div_(y) on a fresh local", "As for `+=`.", "h /= norm");
rule!(DEFERRED_WRITE, "torchlower/in-place-argument-deferred", Mul, true,
    "EXTENSION: x.mul_(y) if inplace else x * y — an in-place write into an argument on a branch",
    "An in-place op (`x.mul_(…)`, `x.add_(…).clamp_(…)`, `x -= y`, `F.relu(x, inplace=True)`, `x[i] = v`) on a tensor that may be a parameter or a view of one, inside a branch of an `if` or a conditional expression whose condition is known only at run time. In a function whose every argument write sits on such a branch, reaching one refuses (`ValueError`) before anything was written and auto mode reruns the call in Python, which writes as eager does; the other branches run natively. A function with a write outside such a branch writes into its arguments natively, all of them (TL212).",
    "return x.mul_(x.sigmoid()) if inplace else x.mul(x.sigmoid())");
rule!(FUNCTION_ADD, "torchlower/function-add-f32-rank1-2", Add, false,
    "torch.add(a, b)", "Two positional tensors, no keywords (no `alpha`, no `out`); same rank matrix as `+`.", "torch.add(a, b)");
rule!(FUNCTION_SUB, "torchlower/function-sub-f32-rank1-2", Sub, false,
    "torch.sub(a, b)", "Two positional tensors, no keywords (no `alpha`, no `out`); same rank matrix as `-`.", "torch.sub(a, b)");
rule!(FUNCTION_MUL, "torchlower/function-mul-f32-rank1-2", Mul, false,
    "torch.mul(a, b)", "Two positional tensors, no keywords; same rank matrix as `*`.", "torch.mul(a, b)");
rule!(FUNCTION_DIV, "torchlower/function-div-f32-rank1-2", Div, false,
    "torch.div(a, b)", "Two positional tensors, no keywords (no `rounding_mode`); true division.", "torch.div(a, b)");
rule!(METHOD_ADD, "torchlower/method-add", Add, true,
    "EXTENSION: a.add(b)", "One tensor or Python number, no keywords (an `alpha` is TL240); the rank matrix of `+`.", "x.add(residual)");
rule!(METHOD_SUB, "torchlower/method-sub", Sub, true,
    "EXTENSION: a.sub(b) / a.subtract(b)", "One tensor or Python number, no keywords (an `alpha` is TL240); the rank matrix of `-`.", "x.sub(mean)");
rule!(METHOD_MUL, "torchlower/method-mul", Mul, true,
    "EXTENSION: a.mul(b) / a.multiply(b)", "One tensor or Python number, no keywords; the rank matrix of `*`.", "x.mul(torch.tanh(F.softplus(x)))");
rule!(METHOD_DIV, "torchlower/method-div", Div, true,
    "EXTENSION: a.div(b) / a.divide(b) / a.true_divide(b)", "One tensor or Python number, no keywords (a `rounding_mode` is TL240); true division.", "x.div(6.0)");

rule!(MEAN_DIM, "torchlower/mean-static-dim-f32-rank1-2", MeanDim, false,
    "mean over one static dim", "Method `t.mean(...)` or `torch.mean(t, ...)`: `dim` an int literal given once (positionally or as keyword; negative literals are normalised), `keepdim` omitted (False) or a keyword bool literal. Rank-2: dim 0/1; rank-1: dim 0 with keepdim=True. The result must be rank 1 or 2.", "h.mean(dim=1)  /  torch.mean(h, 0, keepdim=True)");
rule!(SUM_DIM, "torchlower/sum-static-dim-f32-rank1-2", SumDim, false,
    "sum over one static dim", "Same contract as mean.", "h.sum(dim=1, keepdim=False)");

rule!(MEAN_DIMS, "torchlower/mean-dims", MeanDims, true,
    "EXTENSION: mean over a tuple or list of static dims",
    "`t.mean(dims, keepdim=False)` / `torch.mean(t, dims, …)` with `dims` a tuple or list of int literals (global average pooling, `x.mean((2, 3), keepdim=True)`), on float32 tensors of any rank; `keepdim` a bool literal (also positional), `dtype` omitted or None. libtorch's kernel, whose values eager computes; a repeated or out-of-range dim raises eager's error.",
    "x.mean((2, 3), keepdim=True)  /  x.mean(dim=[-2, -1])");
rule!(SUM_DIMS, "torchlower/sum-dims", SumDims, true,
    "EXTENSION: sum over a tuple or list of static dims", "As mean over dims.", "x.sum(dim=(1, 2))");

rule!(SOFTMAX_DIM, "torchlower/softmax-static-dim-f32-rank1-2", Softmax, false,
    "softmax over one static dim", "Method `t.softmax(dim)` or `torch.softmax(t, dim)`: the dim given once, an int literal (normalised against the rank while analysing) or a Python int known only at run time (libtorch checks it, with eager's IndexError), no other options. Result: the input's type.", "logits.softmax(dim=1)");
rule!(FUNCTIONAL_SOFTMAX, "torchlower/functional-softmax-f32-rank1-2", Softmax, false,
    "torch.nn.functional.softmax(t, dim)", "Like the method, and additionally the keyword literal `dtype=None` is permitted.", "F.softmax(logits, dim=1, dtype=None)");
rule!(ARGMAX_DIM, "torchlower/argmax-static-dim-i64-rank1", Argmax, false,
    "argmax over one static dim giving int64 rank-1 labels", "Method or `torch.argmax`: literal dim once; rank-2 with keepdim omitted/False, or rank-1 dim 0 with keyword keepdim=True. Result: TensorI64Cpu1D (CPU only: there is no int64 CUDA type). The input is float32 or, as an extension, int64 (token ids).", "probs.argmax(dim=1)");

rule!(VIEW, "torchlower/tensor-view", View, true,
    "EXTENSION: t.view(*shape) with Python ints",
    "Sizes as Python ints (literals, int locals, shape entries, `-1` once), or one tuple of them (`t.view(new_shape)`, `t.view(*shape)`); the result's rank is their number (1–4), any dtype. The result is a view of `t` (same storage, eager's strides and offset); sizes that do not fit, or strides that allow no view, raise eager's RuntimeError.",
    "x.view(B, T, n_head, C // n_head)");
rule!(RESHAPE, "torchlower/reshape", Reshape, true,
    "EXTENSION: t.reshape(*shape) / torch.reshape(t, shape)",
    "As `view`, but a copy where no view is possible (as eager).",
    "x.reshape(-1, d)  /  torch.reshape(x, (b, -1))");
rule!(EXPAND, "torchlower/expand", Expand, true,
    "EXTENSION: t.expand(*sizes)",
    "Python ints (or one tuple), at least the tensor's rank of them (`-1` keeps a size); a broadcast view (stride 0 along expanded dims), eager's errors for sizes that do not broadcast.",
    "mask.expand(B, H, T, T)");
rule!(EXPAND_AS, "torchlower/expand-as", ExpandAs, true,
    "EXTENSION: t.expand_as(other)", "A broadcast view to `other`'s shape (other's rank ≥ t's).", "bias.expand_as(x)");
rule!(VIEW_AS, "torchlower/view-as", ViewAs, true,
    "EXTENSION: t.view_as(other)", "A view of `t` with `other`'s shape (any rank, the same device; eager's error when the sizes do not fit). The result aliases `t`.", "x.view_as(y)");
rule!(RESHAPE_AS, "torchlower/reshape-as", ReshapeAs, true,
    "EXTENSION: t.reshape_as(other)", "`t.reshape(other.shape)`: a view where the strides allow it, else a copy, as eager's.", "attn.reshape_as(q)");
rule!(PERMUTE, "torchlower/permute", Permute, true,
    "EXTENSION: t.permute(*dims) / torch.permute(t, dims)",
    "One Python int per dim (a tuple is spread); a view with the dims reordered. Invalid permutations raise eager's error.",
    "x.permute(0, 2, 1, 3)");
rule!(TRANSPOSE, "torchlower/transpose", Transpose, true,
    "EXTENSION: t.transpose(d0, d1) / torch.transpose(t, d0, d1) (and their aliases swapaxes, swapdims)",
    "Two int literal dims (negative ones normalised against the rank); a view with them swapped.",
    "k.transpose(-2, -1)");
rule!(MATRIX_T, "torchlower/t", T, true,
    "EXTENSION: t.t() / torch.t(t) on rank 1 or 2",
    "The matrix transpose (rank 1: the tensor itself), a view.",
    "w.t()");
rule!(UNSQUEEZE, "torchlower/unsqueeze", Unsqueeze, true,
    "EXTENSION: t.unsqueeze(dim) / torch.unsqueeze(t, dim)",
    "An int literal dim in `[-rank-1, rank]`; a view with a size-1 dim there; the result rank is one more (up to 4).",
    "mask.unsqueeze(1)");
rule!(FLATTEN, "torchlower/flatten", Flatten, true,
    "EXTENSION: t.flatten(start_dim=0, end_dim=-1) / torch.flatten(t, …)",
    "Int literal dims, positionally or by keyword; dims `start..=end` merged into one (a view where possible, else a copy, as eager).",
    "torch.flatten(x, 1)");
rule!(INDEX, "torchlower/tensor-basic-indexing", Index, true,
    "EXTENSION: t[…] with ints, slices, None and ...",
    "Basic indexing of a tensor of any dtype: int items (literals or int expressions, negative ones from the end) select and drop a dim, slices `a:b:c` (bounds optional, ints) narrow one, `None` inserts a size-1 dim, one `...` stands for the dims no other item names. The result (rank 1–4) is a view of `t` with eager's strides and offset; an out-of-range int raises eager's IndexError, a zero or negative step eager's ValueError.",
    "x[:, 0]  /  h[..., :k]  /  mask[:, None, None, :]");
rule!(INDEX_ASSIGN, "torchlower/tensor-index-assignment", Index, true,
    "EXTENSION: t[…] = value on a tensor local that aliases no parameter",
    "Assignment through basic or advanced indexing (the items of torchlower/tensor-basic-indexing and torchlower/tensor-advanced-indexing), in place as eager's `__setitem__`: a fresh result of a claimed op (never a parameter or a view of one: TL203) receives a Python number (converted to its dtype, eager's `fill_` / `index_put_`) or a tensor of its dtype and device (`copy_`, broadcast). CPU only.",
    "logits[logits < v[:, [-1]]] = -float('Inf')");
rule!(ADVANCED_INDEXING, "torchlower/tensor-advanced-indexing", Index, true,
    "EXTENSION: t[…] with int64 index tensors, bool masks and lists of ints",
    "Advanced indexing, on the CPU: besides basic items, an int64 index tensor (any rank 1–4) or a list of ints (`[-1]`, `[i, j]`) names one dim, a bool mask of rank k names k dims; the index tensors broadcast together (a mask counts as its rank-1 nonzero positions) and their dims replace the named ones, as eager places them. The result is a gathered copy (eager's `at::index`), with eager's IndexError for an index out of range and its error for a mask of another shape.",
    "pmfs[torch.arange(n), action]  /  x[:, [-1], :]  /  scores[mask]");
rule!(POW, "torchlower/pow-number", Pow, true,
    "EXTENSION: t ** s / torch.pow(t, s) / t.pow(s) with a Python number",
    "A float32 tensor of any rank and a Python int or float exponent (eager's `pow.Tensor_Scalar`, with its exact special cases for 2, 0.5, -1, …); the result has the tensor's type. A tensor exponent and `number ** tensor` are rejected (TL242).",
    "x ** 2  /  torch.pow(x, 3.0)  /  h.pow(0.5)");
rule!(CLAMP, "torchlower/clamp-numbers", Clamp, true,
    "EXTENSION: torch.clamp(t, min, max) / t.clamp(…) / clip with Python-number bounds",
    "A float32 or int64 tensor; bounds positional or by keyword, each a Python int or float or the literal None, at least one given. An int64 tensor stays int64 with int bounds and becomes float32 with a float bound, as eager's result type.",
    "x.clamp(min=1e-6)  /  torch.clamp(x, -1.0, 1.0)");
rule!(CLAMP_MIN, "torchlower/clamp-min-number", ClampMin, true,
    "EXTENSION: torch.clamp_min(t, lo) / t.clamp_min(lo)", "A Python-number bound.", "x.clamp_min(0.0)");
rule!(CLAMP_MAX, "torchlower/clamp-max-number", ClampMax, true,
    "EXTENSION: torch.clamp_max(t, hi) / t.clamp_max(hi)", "A Python-number bound.", "x.clamp_max(6)");
rule!(MAXIMUM, "torchlower/maximum", Maximum, true,
    "EXTENSION: torch.maximum(a, b) / a.maximum(b) / torch.max(a, b)",
    "Two float32 tensors, broadcast as eager does; NaN propagates.", "torch.maximum(x, floor)");
rule!(MINIMUM, "torchlower/minimum", Minimum, true,
    "EXTENSION: torch.minimum(a, b) / a.minimum(b) / torch.min(a, b)",
    "Two float32 tensors, broadcast as eager does; NaN propagates.", "torch.minimum(x, ceiling)");
rule!(INT64_MIN_MAX, "torchlower/minimum-maximum-int64", Minimum, true,
    "EXTENSION: torch.minimum / torch.maximum / torch.min(a, b) / torch.max(a, b) / the methods on two int64 tensors",
    "Two int64 CPU tensors, broadcast as eager does; int64 result of the larger rank.", "torch.min(rp_if_large, torch.full_like(rp_if_large, num_buckets - 1))");
rule!(LAYER_NORM, "torchlower/layer-norm", LayerNorm, true,
    "EXTENSION: F.layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5)",
    "A float32 input of any rank; `normalized_shape` a Python int or a tuple/list of them (`(n,)`, `x.shape[-1:]`); weight and bias float32 tensors or None; eps a Python float. libtorch's kernel (eager's values and errors).",
    "F.layer_norm(x, (n_embd,), ln_w, ln_b, 1e-5)");
rule!(SILU, "torchlower/silu", Silu, true,
    "EXTENSION: F.silu(t)", "A float32 tensor of any rank, `inplace` omitted or False; libtorch's kernel. `inplace=True` on a local that aliases no parameter writes into it with eager's in-place kernel (on a parameter: TL203; on a parameter under a run-time branch: deferred).", "F.silu(F.linear(x, w1)) * F.linear(x, w3)");
rule!(RSQRT, "torchlower/rsqrt", Rsqrt, true,
    "EXTENSION: torch.rsqrt(t) / t.rsqrt()", "A float32 tensor of any rank; libtorch's kernel.", "x * torch.rsqrt(variance + eps)");
rule!(ERF, "torchlower/erf", Erf, true,
    "EXTENSION: torch.erf(t) / t.erf()", "A float32 tensor of any rank; libtorch's kernel.", "0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))");
rule!(SOFTPLUS, "torchlower/softplus", Softplus, true,
    "EXTENSION: F.softplus(t)", "A float32 tensor of any rank, with eager's default beta=1 and threshold=20 (given or omitted); libtorch's kernel.", "F.softplus(x)");
rule!(LOG1P, "torchlower/log1p", Log1p, true,
    "EXTENSION: torch.log1p(t) / t.log1p()", "A float32 tensor of any rank; libtorch's kernel.", "torch.log1p(-x)");
rule!(EXPM1, "torchlower/expm1", Expm1, true,
    "EXTENSION: torch.expm1(t) / t.expm1()", "A float32 tensor of any rank; libtorch's kernel.", "torch.expm1(x)");
rule!(REMAINDER, "torchlower/remainder", Remainder, true,
    "EXTENSION: a % b / torch.remainder(a, b) / a.remainder(b)",
    "Python's modulo (the result takes the divisor's sign) of a float32 or int64 CPU tensor by such a tensor or a Python number, broadcast; int64 when both sides are integers, float32 otherwise. libtorch's `remainder`, with eager's ZeroDivisionError for an integer divisor of zero.",
    "(x - vmin) % bin_size");
rule!(LINSPACE, "torchlower/linspace", Linspace, true,
    "EXTENSION: torch.linspace(start, end, steps)", "Python-number bounds and an int count: a rank-1 float32 CPU tensor (`dtype` omitted, None or torch.float32; `device` the CPU), libtorch's kernel and its error for negative steps.", "torch.linspace(vmin, vmax, num_bins, device=x.device)");
rule!(SIGN, "torchlower/sign", Sign, true,
    "EXTENSION: torch.sign(t) / t.sign()", "The sign of a float32 tensor (-1.0, 0.0 or 1.0; NaN stays NaN), libtorch's kernel.", "torch.sign(x) * torch.log(1 + torch.abs(x))");
rule!(FLOOR, "torchlower/floor", Floor, true,
    "EXTENSION: torch.floor(t) / t.floor()", "A float32 tensor rounded toward -inf, libtorch's kernel.", "torch.floor((x - vmin) / bin_size)");
rule!(OUTER, "torchlower/outer", Outer, true,
    "EXTENSION: torch.outer(a, b) / a.outer(b) / torch.ger", "Two rank-1 float32 or int64 tensors on one device: the rank-2 outer product of the promoted dtype (float32 where either is), libtorch's kernel.", "torch.outer(t, inv_freq)");
rule!(ATAN, "torchlower/atan", Atan, true,
    "EXTENSION: torch.atan(t) / t.atan() / arctan",
    "Arctangent of a float32 tensor, libtorch's kernel.",
    "torch.atan(w2 / h2) - torch.atan(w1 / h1)");
rule!(SIN, "torchlower/sin", Sin, true,
    "EXTENSION: torch.sin(t) / t.sin()", "A float32 tensor of any rank; libtorch's kernel.", "torch.sin(emb)");
rule!(COS, "torchlower/cos", Cos, true,
    "EXTENSION: torch.cos(t) / t.cos()", "A float32 tensor of any rank; libtorch's kernel.", "torch.cos(emb)");
rule!(RELU6, "torchlower/relu6", Relu6, true,
    "EXTENSION: F.relu6(t, inplace=False)", "A float32 tensor of any rank, `inplace` omitted or False; libtorch's kernel. `inplace=True` on a local that aliases no parameter writes into it with eager's in-place kernel (on a parameter: TL203; on a parameter under a run-time branch: deferred).", "F.relu6(x + 3.0) / 6.0");
rule!(HARDSWISH, "torchlower/hardswish", Hardswish, true,
    "EXTENSION: F.hardswish(t, inplace=False)", "A float32 tensor of any rank, `inplace` omitted or False; libtorch's kernel. `inplace=True` on a local that aliases no parameter writes into it with eager's in-place kernel (on a parameter: TL203; on a parameter under a run-time branch: deferred).", "F.hardswish(x)");
rule!(HARDSIGMOID, "torchlower/hardsigmoid", Hardsigmoid, true,
    "EXTENSION: F.hardsigmoid(t, inplace=False)", "A float32 tensor of any rank, `inplace` omitted or False; libtorch's kernel. `inplace=True` on a local that aliases no parameter writes into it with eager's in-place kernel (on a parameter: TL203; on a parameter under a run-time branch: deferred).", "F.hardsigmoid(x)");
rule!(MISH, "torchlower/mish", Mish, true,
    "EXTENSION: F.mish(t, inplace=False)", "A float32 tensor of any rank, `inplace` omitted or False; libtorch's kernel. `inplace=True` on a local that aliases no parameter writes into it with eager's in-place kernel (on a parameter: TL203; on a parameter under a run-time branch: deferred).", "F.mish(x)");
rule!(SELU, "torchlower/selu", Selu, true,
    "EXTENSION: F.selu(t, inplace=False)", "A float32 tensor of any rank, `inplace` omitted or False; libtorch's kernel. `inplace=True` on a local that aliases no parameter writes into it with eager's in-place kernel (on a parameter: TL203; on a parameter under a run-time branch: deferred).", "F.selu(x)");
rule!(ELU, "torchlower/elu", Elu, true,
    "EXTENSION: F.elu(t, alpha=1.0, inplace=False)", "A float32 tensor of any rank with eager's default alpha (given or omitted); libtorch's kernel.", "F.elu(x)");
rule!(LEAKY_RELU, "torchlower/leaky-relu", LeakyRelu, true,
    "EXTENSION: F.leaky_relu(t, negative_slope=0.01, inplace=False)",
    "A float32 tensor of any rank and a Python-number slope; `x` above 0, else `x * slope` in float32 as eager's kernel (NaN and -0.0 kept).",
    "F.leaky_relu(x, 0.2)");
rule!(HARDTANH, "torchlower/hardtanh", Hardtanh, true,
    "EXTENSION: F.hardtanh(t, min_val=-1.0, max_val=1.0, inplace=False)",
    "A float32 tensor of any rank and Python-number bounds; eager's hardtanh is its clamp, and so is ours (NaN propagates).",
    "F.hardtanh(x, 0.0, 6.0)");
rule!(CONV1D, "torchlower/conv1d", Conv1d, true,
    "EXTENSION: F.conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    "A float32 input of rank 2 (unbatched) or 3, float32 weight and optional bias on its device; stride, padding and dilation Python ints or tuples of them, groups an int (a padding string stays Python). libtorch's kernel: eager's values and errors.",
    "F.conv1d(mel, conv1_w, conv1_b, padding=1)");
rule!(CONV2D, "torchlower/conv2d", Conv2d, true,
    "EXTENSION: F.conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    "A float32 input of rank 3 (unbatched) or 4, float32 weight and optional bias on its device; stride, padding and dilation Python ints or tuples of them, groups an int (depthwise too; a padding string stays Python). libtorch's kernel: eager's values and errors.",
    "F.conv2d(x, w, b, stride=2, padding=1)");
rule!(MAX_POOL1D, "torchlower/max-pool1d", MaxPool1d, true,
    "EXTENSION: F.max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False)",
    "A float32 input of rank 2 or 3; sizes Python ints or tuples; `return_indices` omitted or False. libtorch's kernel.",
    "F.max_pool1d(x, 2)");
rule!(MAX_POOL2D, "torchlower/max-pool2d", MaxPool2d, true,
    "EXTENSION: F.max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False)",
    "A float32 input of rank 3 or 4; sizes Python ints or tuples; `return_indices` omitted or False. libtorch's kernel.",
    "F.max_pool2d(x, kernel_size=3, stride=2, padding=1)");
rule!(AVG_POOL1D, "torchlower/avg-pool1d", AvgPool1d, true,
    "EXTENSION: F.avg_pool1d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)",
    "A float32 input of rank 2 or 3; sizes Python ints or tuples. libtorch's kernel.",
    "F.avg_pool1d(x, 2)");
rule!(AVG_POOL2D, "torchlower/avg-pool2d", AvgPool2d, true,
    "EXTENSION: F.avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)",
    "A float32 input of rank 3 or 4; sizes Python ints or tuples; `divisor_override` omitted or None. libtorch's kernel.",
    "F.avg_pool2d(x, 2)");
rule!(ADAPTIVE_AVG_POOL1D, "torchlower/adaptive-avg-pool1d", AdaptiveAvgPool1d, true,
    "EXTENSION: F.adaptive_avg_pool1d(x, output_size)", "A float32 input of rank 2 or 3; an int output size. libtorch's kernel.", "F.adaptive_avg_pool1d(x, 1)");
rule!(ADAPTIVE_AVG_POOL2D, "torchlower/adaptive-avg-pool2d", AdaptiveAvgPool2d, true,
    "EXTENSION: F.adaptive_avg_pool2d(x, output_size)",
    "A float32 input of rank 3 or 4; the output size a Python int or a tuple of two (a `None` entry stays Python). libtorch's kernel.",
    "F.adaptive_avg_pool2d(x, (1, 1))");
rule!(ADAPTIVE_MAX_POOL2D, "torchlower/adaptive-max-pool2d", AdaptiveMaxPool2d, true,
    "EXTENSION: F.adaptive_max_pool2d(x, output_size)",
    "A float32 input of rank 3 or 4; the output size a Python int or a tuple of two; `return_indices` omitted or False (the values only). libtorch's kernel.",
    "F.adaptive_max_pool2d(x, 1)");
rule!(PAD, "torchlower/pad", Pad, true,
    "EXTENSION: F.pad(x, pad, mode=\"constant\", value=None)",
    "A float32 input of any rank; `pad` a tuple of Python ints (two per padded trailing dim), `mode` one of constant, reflect, replicate, circular as a string literal, `value` a Python number or None. libtorch's `pad`: eager's values and errors.",
    "F.pad(x, (0, 1, 0, 1), mode=\"constant\", value=0)");
rule!(BATCH_NORM, "torchlower/batch-norm-eval", BatchNorm, true,
    "EXTENSION: F.batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5)",
    "Inference batch normalization: a float32 input of rank 2–4, running statistics and optional affine parameters as float32 tensors on its device, `training` omitted or False (the statistics are only read), momentum and eps Python numbers. libtorch's kernel.",
    "F.batch_norm(x, bn_mean, bn_var, bn_w, bn_b, False, 0.1, 1e-5)");
rule!(GROUP_NORM, "torchlower/group-norm", GroupNorm, true,
    "EXTENSION: F.group_norm(x, num_groups, weight=None, bias=None, eps=1e-5)",
    "A float32 input of rank 2–4, an int group count, optional float32 affine parameters, eps a Python number. libtorch's kernel: eager's values and errors.",
    "F.group_norm(h, 32, norm_w, norm_b, 1e-6)");
rule!(EMBEDDING, "torchlower/embedding", Embedding, true,
    "EXTENSION: F.embedding(indices, weight)",
    "int64 indices of rank 1–3 and a rank-2 float32 weight: the rows of `weight` (result rank one more than the indices). `padding_idx`, `max_norm`, `scale_grad_by_freq` and `sparse` omitted or at eager's defaults (`max_norm` renormalises the weight in place). An out-of-range index raises eager's IndexError.",
    "F.embedding(idx, wte)");
rule!(EMBEDDING_BAG, "torchlower/embedding-bag", EmbeddingBag, true,
    "EXTENSION: F.embedding_bag(input, weight, offsets, mode=\"sum\"|\"mean\"|\"max\", per_sample_weights=None, include_last_offset=False)",
    "Bags of rows of a rank-2 float32 weight, reduced per bag: rank-1 int64 indices with rank-1 int64 `offsets` (the start of each bag; `include_last_offset` as eager), or rank-2 indices without offsets (one bag per row). `per_sample_weights` (float32, the indices' shape) only with `mode=\"sum\"`, as eager. A float32 matrix of one row per bag; empty bags are zeros. `max_norm`, `scale_grad_by_freq`, `sparse` and `padding_idx` omitted or at eager's defaults. libtorch's kernel: eager's values and its errors for out-of-range indices and offsets.",
    "F.embedding_bag(sparse_index_group_batch, emb_weight, sparse_offset_group_batch, mode=\"sum\")");
rule!(EQ, "torchlower/eq", Eq, true,
    "EXTENSION: a == b / torch.eq(a, b) / a.eq(b)",
    "Two tensors of any dtypes on the CPU (eager's type promotion and broadcasting), or a tensor and a Python int or float; a bool tensor of the larger rank.",
    "idx == 0");
rule!(NE, "torchlower/ne", Ne, true, "EXTENSION: a != b / torch.ne(a, b) / a.ne(b)", "As `==`; a bool tensor.", "mask != 0");
rule!(LT, "torchlower/lt", Lt, true, "EXTENSION: a < b / torch.lt(a, b) / a.lt(b)", "As `==`; a bool tensor (`0 < x` is `x > 0`, as Python reflects it).", "x < threshold");
rule!(LE, "torchlower/le", Le, true, "EXTENSION: a <= b / torch.le(a, b) / a.le(b)", "As `==`; a bool tensor.", "x <= 0.5");
rule!(GT, "torchlower/gt", Gt, true, "EXTENSION: a > b / torch.gt(a, b) / a.gt(b)", "As `==`; a bool tensor.", "relative_position > 0");
rule!(GE, "torchlower/ge", Ge, true, "EXTENSION: a >= b / torch.ge(a, b) / a.ge(b)", "As `==`; a bool tensor.", "ws >= min_size");
rule!(MASKED_FILL, "torchlower/masked-fill", MaskedFill, true,
    "EXTENSION: x.masked_fill(mask, value) / torch.masked_fill(x, mask, value)",
    "A float32 tensor, a bool mask that broadcasts to it (eager's error otherwise) and a Python number (`float(\"-inf\")` too); the input's type.",
    "att.masked_fill(bias[:, :, :T, :T] == 0, float(\"-inf\"))");
rule!(WHERE, "torchlower/where", Where, true,
    "EXTENSION: torch.where(cond, a, b)",
    "A bool condition and two float32 or int64 tensors or Python numbers, broadcast as eager does: a float32 result with any float32 tensor or Python float, else int64, of the largest rank. The one-argument form (indices of the set elements, a data-dependent shape) stays Python.",
    "torch.where(mask, x, 0.0)");
rule!(ARANGE, "torchlower/arange", Arange, true,
    "EXTENSION: torch.arange(end) / torch.arange(start, end, step=1)",
    "Python-int bounds, positionally; `dtype` omitted, torch.long/int64 or torch.float32; `device` omitted, \"cpu\" or a CPU tensor's `.device`. An int64 (or float32) rank-1 CPU tensor from libtorch's kernel: eager's values and errors.",
    "torch.arange(0, t, dtype=torch.long, device=idx.device)");
rule!(NARROW, "torchlower/narrow", Narrow, true,
    "EXTENSION: t.narrow(dim, start, length) / torch.narrow(…)",
    "A tensor of any dtype and Python ints (negative ones from the end, as eager); a view with eager's strides and offset, eager's errors out of range.",
    "x.narrow(1, 0, k)");
rule!(SELECT, "torchlower/select", Select, true,
    "EXTENSION: t.select(dim, index) / torch.select(…)",
    "A tensor of rank 2–4 and Python ints; a view one rank lower (eager's IndexError out of range).",
    "h.select(1, -1)");
rule!(UNFLATTEN, "torchlower/unflatten", Unflatten, true,
    "EXTENSION: t.unflatten(dim, sizes) / torch.unflatten(…)",
    "A Python-int dim and a tuple or list of Python ints (`-1` inferred); a view whose rank grows by `len(sizes) - 1` (up to 4), eager's errors when the sizes do not multiply out.",
    "x.unflatten(-1, (n_head, head_dim))");
rule!(SQUEEZE, "torchlower/squeeze-dim", Squeeze, true,
    "EXTENSION: t.squeeze(dim) / torch.squeeze(t, dim)",
    "A Python-int dim of a tensor of rank 2–4: a view without that dim. Eager keeps a dim whose size is not 1, which changes no rank but breaks the annotated one; native code refuses that call with a ValueError, so auto mode reruns it in Python. `squeeze()` without a dim stays Python (its rank depends on the sizes).",
    "value.squeeze(-1)");
rule!(DROPOUT_EVAL, "torchlower/dropout-eval", Dropout, true,
    "EXTENSION: F.dropout(t, p, training=False)",
    "Dropout outside training, as inference code calls it (`training=self.training` in eval mode is `False`): the input itself, any dtype, as eager returns it; `p` a Python float (or an int literal) checked as eager checks it (ValueError outside [0, 1]). `training` is the literal False or a bool known at run time: True there draws random masks, which native code refuses (ValueError, so auto mode reruns Python). Omitted (its default, True) or the literal True: TL201. `inplace=True` stays Python.",
    "attn = F.dropout(attn, p=self.dropout, training=False)");
rule!(CLONE, "torchlower/clone", Clone, true,
    "EXTENSION: t.clone() / torch.clone(t)",
    "A copy of a tensor of any dtype in eager's preserved memory format (a dense input's strides, else contiguous), so later views succeed or raise as eager's; the copy is fresh, so writing into it (`y[..., 0] = …`) is claimed. Other `memory_format`s stay Python.",
    "y = x.clone()");
rule!(ROLL, "torchlower/roll", Roll, true,
    "EXTENSION: torch.roll(t, shifts, dims=None) / t.roll(…)",
    "A tensor of any dtype shifted cyclically: `shifts` and `dims` Python ints or tuples of them (without `dims` the flattened tensor rolls and is reshaped back), libtorch's kernel and errors.",
    "x = torch.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))");
rule!(TENSOR_TRUTH, "torchlower/all-any-condition", All, true,
    "EXTENSION: if t.all(): / assert t.any() / while torch.all(t):",
    "`t.all()` / `t.any()` (or `torch.all(t)` / `torch.any(t)`) without a dim as the whole test of an `if`, `while` or `assert`: a tensor of any dtype reduced to one Python bool, as `bool()` reads eager's 0-dim result (an empty tensor is all true and not any). Elsewhere the 0-dim bool result has no type (TL202).",
    "assert (boxes1[:, 2:] >= boxes1[:, :2]).all()");
rule!(UNFOLD, "torchlower/unfold", Unfold, true,
    "EXTENSION: t.unfold(dimension, size, step)",
    "The windows of `size` elements every `step` along `dimension` (Python ints) of a tensor of any dtype, as a new last dim: a view (rank one more), aliasing its input as eager's; libtorch's errors for a size beyond the dim or a step below 1. (`F.unfold`, the image-patch op, is another function and stays Python.)",
    "x = x.unfold(dimension=-1, size=self.patch_len, step=self.stride)");
rule!(FLIP, "torchlower/flip", Flip, true,
    "EXTENSION: torch.flip(t, dims) / t.flip(dims)",
    "A copy of a tensor of any dtype with its elements reversed along `dims` (a tuple or list of Python ints; the method also takes them one by one, `t.flip(0, 1)`), libtorch's kernel and errors.",
    "attention_mask.flip([-1]).cumsum(-1).flip([-1])");
rule!(REPEAT_INTERLEAVE, "torchlower/repeat-interleave", RepeatInterleave, true,
    "EXTENSION: torch.repeat_interleave(t, repeats, dim=None) / t.repeat_interleave(…)",
    "A copy of a tensor of any dtype with each element repeated `repeats` (a Python int) times along `dim` (a Python int; the input's rank), or over the flattened tensor without it (rank 1); libtorch's kernel and errors (a negative `repeats`). Tensor `repeats` and `output_size` stay Python.",
    "mask = torch.repeat_interleave(mask, embedding_size, dim=2)");
rule!(DETACH, "torchlower/detach", Detach, true,
    "EXTENSION: t.detach() / torch.detach(t)",
    "An alias of the tensor (native results never require grad, and inputs keep theirs).",
    "qk = qk.detach()");
rule!(NORM, "torchlower/norm", Norm, true,
    "EXTENSION: torch.norm(t, p=\"fro\", dim, keepdim=False) / t.norm(…)",
    "A float32 tensor, `p` a Python number, None or \"fro\" (the 2-norm, over one or two dims), `dim` an int or a tuple of ints (required: without it the result is rank 0), `keepdim` a bool literal. Eager sends this form to `linalg.vector_norm`; so does native code.",
    "image_features / image_features.norm(dim=1, keepdim=True)");
rule!(VECTOR_NORM, "torchlower/vector-norm", VectorNorm, true,
    "EXTENSION: torch.linalg.vector_norm(x, ord=2, dim, keepdim=False)",
    "A float32 tensor, `ord` a Python number, `dim` an int or a tuple of ints (required), `keepdim` a bool literal.",
    "torch.linalg.vector_norm(x, dim=-1, keepdim=True)");
rule!(NORMALIZE, "torchlower/normalize", Normalize, true,
    "EXTENSION: F.normalize(x, p=2.0, dim=1, eps=1e-12)",
    "A float32 tensor and Python numbers; eager's own steps (`x / x.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(x)`), so the values are its.",
    "F.normalize(q, dim=-1)");
rule!(ZEROS, "torchlower/zeros", Zeros, true,
    "EXTENSION: torch.zeros(*size, dtype=None, device=None)",
    "Sizes as Python ints or one tuple of them (ranks 1–5); `dtype` omitted (float32), torch.float32, torch.long or torch.bool; on the CPU. libtorch's kernel.",
    "torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype, device=x.device)");
rule!(EMPTY, "torchlower/empty", Empty, true,
    "EXTENSION: torch.empty(*size, dtype=None, device=None)",
    "As torch.zeros, uninitialised: the values are unspecified, natively as in eager (libtorch's `empty`). Real code writes it for a buffer it overwrites or ignores, such as diffusers' `baddbmm` input with `beta=0`.",
    "torch.empty(query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device)");
rule!(ONES, "torchlower/ones", Ones, true,
    "EXTENSION: torch.ones(*size, dtype=None, device=None)", "As torch.zeros, with ones.", "torch.ones(n, n, dtype=torch.bool)");
rule!(FULL, "torchlower/full", Full, true,
    "EXTENSION: torch.full(size, fill_value, dtype=None, device=None)",
    "A tuple of Python ints and a Python number; the dtype from the number as eager infers it (int → int64, float → float32, bool → bool) unless given. On the CPU.",
    "torch.full((1, 1, t, t), float(\"-inf\"))");
rule!(POW_TENSOR, "torchlower/pow-tensor-exponent", PowTensor, true,
    "EXTENSION: torch.pow(t, u) / t.pow(u) / t ** u of two tensors, torch.pow(number, t) / number ** t",
    "On the CPU, where either side is float32 (a 0-dim float32 base over an int32 exponent: BLOOM's ALiBi slopes; `1.0 / torch.pow(2, m)`: MPT's): a float32 result of the broadcast rank, eager's `pow` kernel, promotion and errors. Two integer tensors, or a number over an integer tensor, stay Python.",
    "slopes = torch.pow(base, powers)  /  1.0 / torch.pow(2, m)");
rule!(SCALAR_TENSOR, "torchlower/tensor-of-number", ScalarTensor, true,
    "EXTENSION: torch.tensor(number, dtype=None, device=None)",
    "A Python number: the 0-dim tensor of it, float32 (a float, or `dtype=torch.float32`) on the CPU, the number converted as eager converts it. A list or a tensor as `data`, and 0-dim int64 or bool tensors, stay Python.",
    "normalizer = torch.tensor(hidden_size**0.5, dtype=hidden_states.dtype)");
rule!(ZEROS_LIKE, "torchlower/zeros-like", ZerosLike, true,
    "EXTENSION: torch.zeros_like(t)", "Any tensor; zeros of its shape, dtype and device (`dtype` omitted or its own).", "torch.zeros_like(relative_position)");
rule!(ONES_LIKE, "torchlower/ones-like", OnesLike, true,
    "EXTENSION: torch.ones_like(t)", "Any tensor; ones of its shape, dtype and device.", "torch.ones_like(mean)");
rule!(FULL_LIKE, "torchlower/full-like", FullLike, true,
    "EXTENSION: torch.full_like(t, fill_value)", "Any tensor and a Python number; its shape, dtype and device.", "torch.full_like(x, num_buckets - 1)");
rule!(GELU_TANH, "torchlower/gelu-tanh", GeluTanh, true,
    "EXTENSION: F.gelu(t, approximate=\"tanh\")",
    "A float32 tensor of any rank with the keyword literal \"tanh\"; libtorch's tanh-approximation kernel (eager's values).",
    "F.gelu(x, approximate=\"tanh\")");
rule!(AMAX, "torchlower/amax", Amax, true,
    "EXTENSION: torch.amax(t, dim, keepdim=False) / t.amax(…)",
    "A float32 tensor, `dim` an int or a tuple of ints (required: without it the result is rank 0), `keepdim` a bool literal; NaN propagates as eager's.",
    "x.amax(dim=-1, keepdim=True)");
rule!(AMIN, "torchlower/amin", Amin, true, "EXTENSION: torch.amin(t, dim, keepdim=False) / t.amin(…)", "As amax.", "torch.amin(x, (1, 2))");
rule!(LOGSUMEXP, "torchlower/logsumexp", Logsumexp, true,
    "EXTENSION: torch.logsumexp(t, dim, keepdim=False) / t.logsumexp(…)", "As amax; libtorch's stable kernel.", "torch.logsumexp(logits, dim=-1)");
rule!(VAR, "torchlower/var", Var, true,
    "EXTENSION: torch.var(t, dim, unbiased=True, keepdim=False, *, correction) / t.var(…)",
    "A float32 tensor, `dim` an int or a tuple of ints (required), `unbiased` a bool or `correction` a Python number (not both), `keepdim` a bool literal. libtorch's kernel.",
    "x.var(-1, keepdim=True, unbiased=False)");
rule!(STD, "torchlower/std", Std, true,
    "EXTENSION: torch.std(t, dim, unbiased=True, keepdim=False, *, correction) / t.std(…)", "As var.", "x.std(dim=0, correction=0)");
rule!(PROD, "torchlower/prod", Prod, true,
    "EXTENSION: torch.prod(t, dim, keepdim=False) / t.prod(…)", "A float32 tensor and one Python-int dim (required); `dtype` omitted or None.", "probs.prod(dim=-1)");
rule!(ARGMIN, "torchlower/argmin", Argmin, true,
    "EXTENSION: torch.argmin(t, dim, keepdim=False) / t.argmin(…)", "A float32 tensor and one Python-int dim (required); int64 indices.", "dist.argmin(dim=1)");
rule!(ALL, "torchlower/all", All, true,
    "EXTENSION: torch.all(t, dim, keepdim=False) / t.all(…)", "A tensor of any dtype, `dim` an int or a tuple of ints (required); a bool tensor.", "(x > 0).all(dim=-1)");
rule!(ANY, "torchlower/any", Any, true, "EXTENSION: torch.any(t, dim, keepdim=False) / t.any(…)", "As all.", "mask.any(dim=1)");
rule!(SUM_ALL, "torchlower/sum-all", SumAll, true,
    "EXTENSION: t.sum() / torch.sum(t): every element, rank 0",
    "Any CPU tensor, no dim and no options: a rank-0 tensor (`TensorF32Cpu0D`, or `TensorI64Cpu0D` for int64, int32 and bool inputs, as eager promotes). libtorch's kernel.", "mask.sum()");
rule!(MEAN_ALL, "torchlower/mean-all", MeanAll, true,
    "EXTENSION: t.mean() / torch.mean(t): every element, rank 0", "A float32 CPU tensor (eager raises for integers), no dim: `TensorF32Cpu0D`.", "x.mean()");
rule!(MAX_ALL, "torchlower/max-all", MaxAll, true,
    "EXTENSION: t.max() / torch.max(t): the largest element, rank 0",
    "A float32, int64 or bool CPU tensor, no dim: rank 0 of its dtype (eager's error for an empty tensor). libtorch's kernel.", "lengths.max()");
rule!(MIN_ALL, "torchlower/min-all", MinAll, true, "EXTENSION: t.min() / torch.min(t): the smallest element, rank 0", "As max.", "torch.min(x)");
rule!(ARGMAX_ALL, "torchlower/argmax-all", ArgmaxAll, true,
    "EXTENSION: t.argmax() / torch.argmax(t): the flat index of the largest element",
    "A float32 or int64 CPU tensor, no dim: `TensorI64Cpu0D` (the index into the flattened tensor; the first of equal maxima, NaN the largest, as eager).", "q_values.argmax()");
rule!(ARGMIN_ALL, "torchlower/argmin-all", ArgminAll, true, "EXTENSION: t.argmin() / torch.argmin(t): the flat index of the smallest element", "As argmax.", "dist.argmin()");
rule!(PROD_ALL, "torchlower/prod-all", ProdAll, true,
    "EXTENSION: t.prod() / torch.prod(t): every element, rank 0", "As sum: int64 for int64, int32 and bool inputs.", "probs.prod()");
rule!(STD_ALL, "torchlower/std-all", StdAll, true,
    "EXTENSION: t.std(unbiased=True) / torch.std(t): every element, rank 0",
    "A float32 CPU tensor, `unbiased` omitted or a bool (positional or keyword): `TensorF32Cpu0D` (NaN for one element when unbiased, as eager).", "(x - x.mean()) / (x.std() + 1e-8)");
rule!(VAR_ALL, "torchlower/var-all", VarAll, true, "EXTENSION: t.var(unbiased=True) / torch.var(t): every element, rank 0", "As std.", "x.var(unbiased=False)");
rule!(LOG_SOFTMAX, "torchlower/log-softmax", LogSoftmax, true,
    "EXTENSION: F.log_softmax(t, dim) / torch.log_softmax(t, dim) / t.log_softmax(dim)",
    "A float32 tensor and a Python-int dim (required); `dtype` omitted or None. libtorch's kernel.", "F.log_softmax(logits, dim=-1)");
rule!(GLU, "torchlower/glu", Glu, true,
    "EXTENSION: F.glu(t, dim=-1)", "A float32 tensor and a Python-int dim: the first half times the sigmoid of the second (eager's error for an odd size).", "F.glu(h, dim=-1)");
rule!(TRIL, "torchlower/tril", Tril, true,
    "EXTENSION: torch.tril(t, diagonal=0) / t.tril(…)", "A tensor of any dtype and rank 2–5, a Python-int diagonal.", "torch.tril(torch.ones(t, t))");
rule!(TRIU, "torchlower/triu", Triu, true,
    "EXTENSION: torch.triu(t, diagonal=0) / t.triu(…)", "As tril.", "torch.triu(mask, diagonal=start_pos + 1)");
rule!(MESHGRID, "torchlower/meshgrid", Meshgrid, true,
    "EXTENSION: torch.meshgrid(a, b, indexing=\"ij\")",
    "Two rank-1 tensors of one dtype: the pair of rank-2 coordinate grids (\"ij\" or \"xy\"; omitted, \"ij\" as eager, without its warning), libtorch's kernel (views of the inputs, as eager's). Lowered where it is unpacked (`yv, xv = torch.meshgrid(y, x, indexing=\"ij\")`), returned or indexed; three or more tensors stay Python.",
    "yv, xv = torch.meshgrid(y, x, indexing=\"ij\")");
rule!(ISIN, "torchlower/isin", Isin, true,
    "EXTENSION: torch.isin(elements, test_elements, *, assume_unique=False, invert=False)",
    "Two tensors of one dtype (float32 or int64): a bool tensor of the elements' shape, libtorch's kernel.",
    "eos_token_mask = torch.isin(vocab_tensor, self.eos_token_id)");
rule!(GATHER, "torchlower/gather", Gather, true,
    "EXTENSION: torch.gather(t, dim, index) / t.gather(dim, index)",
    "A tensor of any dtype, a Python-int dim and an int64 index of the same rank; the input's dtype, the index's shape (eager's errors out of range).",
    "logp.gather(-1, actions)");
rule!(SCATTER, "torchlower/scatter", Scatter, true,
    "EXTENSION: torch.scatter(t, dim, index, src) / t.scatter(dim, index, src)",
    "A copy of a tensor of any dtype with `src`'s values (a tensor of its dtype and rank) written where an int64 index of the same rank points along a Python-int dim, libtorch's kernel (eager's errors out of range). `src` may be a Python number given positionally (eager's `value` overload, the number converted to the tensor's dtype); in place, `t.scatter_(dim, index, number)` on a new float32 local (TD-MPC2's one-hot) is computed out of place and written back. The `reduce` forms stay Python.",
    "indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)");
rule!(INDEX_SELECT, "torchlower/index-select", IndexSelect, true,
    "EXTENSION: torch.index_select(t, dim, index) / t.index_select(dim, index)",
    "A tensor of any dtype, a Python-int dim and a rank-1 int64 index.", "emb.index_select(0, ids)");
rule!(ONE_HOT, "torchlower/one-hot", OneHot, true,
    "EXTENSION: F.one_hot(labels, num_classes=-1)", "int64 labels of rank 1–4; int64 one-hot rows (one rank more). `num_classes=-1` infers the count from the data, as eager.", "F.one_hot(actions, n_actions)");
rule!(CROSS_ENTROPY, "torchlower/cross-entropy-none", CrossEntropy, true,
    "EXTENSION: F.cross_entropy(scores, targets, reduction=\"none\", ignore_index=…, label_smoothing=…)",
    "float32 class scores `(N, C, d…)` and int64 targets `(N, d…)` (one rank less); the loss per target, float32 of the targets' shape (0 where a target is `ignore_index`), libtorch's kernel with eager's errors for a target out of range. `reduction=\"mean\"`/`\"sum\"` give a rank-0 tensor (TL207); class weights and probability targets are not claimed.",
    "-F.cross_entropy(logits.transpose(1, 2), tokens, reduction=\"none\", ignore_index=pad_id)");
rule!(TENSOR_OF_INTS, "torchlower/tensor-of-int-comprehension", TensorOfInts, true,
    "EXTENSION: torch.tensor([e for i in range(a) for j in range(b)]) of ints",
    "A list comprehension whose generators are `for name in range(…)` loops (no `if`; a later loop's bounds may use the earlier names, as DLRM's `range(i + offset)`) and whose element is a Python int expression: the loops run natively into an int64 rank-1 tensor on the CPU, as eager's `torch.tensor` of the list. The comprehension's names are its own (no other local of the function may share one). An empty list is eager's float32 tensor, which the type cannot hold: native code refuses that call (`ValueError`) and auto mode runs the Python function.",
    "li = torch.tensor([i for i in range(ni) for j in range(i + offset)])");
rule!(WHERE_NONZERO, "torchlower/where-nonzero-rank1", WhereNonzero, true,
    "EXTENSION: torch.where(cond) of a rank-1 tensor",
    "A rank-1 tensor of any dtype: the 1-tuple of the int64 indices of its nonzero (true) elements, eager's `cond.nonzero(as_tuple=True)`; used as `torch.where(keep)[0]`, unpacked or returned. How many indices is known only at run time. A condition of higher rank is TL208.",
    "keep = torch.where(keep)[0]");
rule!(MULTINOMIAL, "torchlower/multinomial", Multinomial, true,
    "EXTENSION: torch.multinomial(probs, num_samples, replacement=False) / probs.multinomial(…)",
    "Rank-1 or rank-2 float32 probabilities; int64 indices of that rank, drawn from torch's default CPU generator by libtorch's kernel, so a call after `torch.manual_seed(s)` draws what eager draws (and advances the generator as eager does). A `generator=` is not claimed (TL201).",
    "idx_next = torch.multinomial(probs, num_samples=1)");
rule!(RMS_NORM, "torchlower/rms-norm", RmsNorm, true,
    "EXTENSION: F.rms_norm(x, normalized_shape, weight=None, eps=None)",
    "A float32 input, `normalized_shape` an int or a tuple of ints, an optional float32 weight, eps a Python number or None. libtorch's kernel.",
    "F.rms_norm(h, (dim,), weight, 1e-6)");
rule!(SDPA, "torchlower/scaled-dot-product-attention", ScaledDotProductAttention, true,
    "EXTENSION: F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False)",
    "float32 query, key and value of rank 3–4 on one device, a bool or float mask or None, `dropout_p` omitted or 0.0 (inference), `is_causal` and `enable_gqa` bools, `scale` a Python number or None. libtorch's kernel: eager's values and errors.",
    "F.scaled_dot_product_attention(q, k, v, is_causal=True)");
rule!(MHA, "torchlower/multi-head-attention-forward", MultiHeadAttentionForward, true,
    "EXTENSION: F.multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None, need_weights=True, attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True, is_causal=False)",
    "What `nn.MultiheadAttention` runs, in its inference form: float32 query, key and value all of rank 3 (sequence first) or all of rank 2, `need_weights=False` (the result is `(output, None)`), `bias_k`, `bias_v`, `key_padding_mask`, `static_k` and `static_v` None, `add_zero_attn=False`, and dropout off (`training=False` or `dropout_p=0`); packed or separate projection weights, a bool or float `attn_mask` of rank 2–3 or None, `is_causal`. Eager's function is Python over ATen ops; the native one runs the same ops in the same order (one packed projection when `query is key is value`, as eager tests it), so values, shapes and errors are eager's. CPU only.",
    "x = F.multi_head_attention_forward(x, x, x, d_model, n_head, in_proj_weight, in_proj_bias, None, None, False, 0.0, out_proj_weight, out_proj_bias, training=False, need_weights=False, attn_mask=mask)[0]");
rule!(CONV1D_PADDING, "torchlower/conv1d-padding-string", Conv1dPadding, true,
    "EXTENSION: F.conv1d(x, weight, bias, stride, padding=\"same\"|\"valid\", dilation, groups)",
    "As torchlower/conv1d with a padding string literal: libtorch's padding-string overload, as eager calls it (its error for `\"same\"` with a stride).",
    "F.conv1d(x, w, padding=\"same\")");
rule!(CONV2D_PADDING, "torchlower/conv2d-padding-string", Conv2dPadding, true,
    "EXTENSION: F.conv2d(x, weight, bias, stride, padding=\"same\"|\"valid\", dilation, groups)",
    "As torchlower/conv2d with a padding string literal: libtorch's padding-string overload.", "F.conv2d(x, w, b, padding=\"same\")");
rule!(CONV_TRANSPOSE1D, "torchlower/conv-transpose1d", ConvTranspose1d, true,
    "EXTENSION: F.conv_transpose1d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)",
    "A float32 input of rank 2 or 3, weight and optional bias on its device, sizes as Python ints or 1-tuples. libtorch's kernel.",
    "F.conv_transpose1d(x, w, b, stride=u, padding=(k - u) // 2)");
rule!(CONV_TRANSPOSE2D, "torchlower/conv-transpose2d", ConvTranspose2d, true,
    "EXTENSION: F.conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)",
    "A float32 input of rank 3 or 4, weight and optional bias on its device, sizes as Python ints or tuples. libtorch's kernel.",
    "F.conv_transpose2d(h, w, b, stride=2, padding=1, output_padding=1)");
rule!(INTERPOLATE, "torchlower/interpolate", Interpolate, true,
    "EXTENSION: F.interpolate(x, size=None, scale_factor=None, mode=\"nearest\"|\"linear\"|\"bilinear\"|\"bicubic\", align_corners=None)",
    "A float32 input of the rank its mode takes (nearest: 3 or 4, linear: 3, bilinear and bicubic: 4; others are eager's NotImplementedError) and exactly one of `size` (an int, or one per spatial dim) and `scale_factor` (a Python number); `align_corners` not with nearest; `recompute_scale_factor` and `antialias` at their defaults. The output size and the scale handed to libtorch's kernel are eager's (`int(size * scale)`).",
    "F.interpolate(x, scale_factor=2.0, mode=\"nearest\")");
rule!(ADDMM, "torchlower/addmm", Addmm, true,
    "EXTENSION: torch.addmm(input, mat1, mat2), input.addmm(mat1, mat2)",
    "Two float32 matrices and an input of rank 1–2 that broadcasts to their product; `beta` and `alpha` omitted or 1. libtorch's kernel (GPT-2's `Conv1D`).",
    "torch.addmm(bias, x.view(-1, x.size(-1)), weight)");
rule!(BADDBMM, "torchlower/baddbmm", Baddbmm, true,
    "EXTENSION: torch.baddbmm(input, batch1, batch2, beta=1, alpha=1), input.baddbmm(batch1, batch2, beta=1, alpha=1)",
    "Two rank-3 float32 batches and an input that broadcasts to their product, Python-number `beta` and `alpha` (`beta=0` ignores the input, NaN included); the method binds its receiver as `input` (BLOOM's ALiBi scores). libtorch's kernel.",
    "torch.baddbmm(scores, q, k.transpose(-1, -2), beta=0, alpha=scale)");
rule!(CATEGORICAL, "torchlower/categorical", Categorical, true,
    "EXTENSION: d = torch.distributions.Categorical(logits=x)",
    "Assigned to a name: float32 logits of rank 1–4; `d` stores eager's normalized logits (`x - x.logsumexp(-1, keepdim=True)`). Eager's argument check runs (logits that normalize to NaN make native code refuse; auto mode reruns Python, which raises eager's ValueError).",
    "probs = Categorical(logits=logits)");
rule!(NORMAL, "torchlower/normal", Normal, true,
    "EXTENSION: d = torch.distributions.Normal(loc, scale)",
    "Assigned to a name: float32 tensors, broadcast as eager broadcasts them; eager's checks (no NaN loc, a positive scale) run, and native code refuses where they fail.",
    "probs = Normal(action_mean, action_std)");
rule!(CATEGORICAL_PROBS, "torchlower/categorical-probs", CategoricalProbs, true,
    "EXTENSION: Categorical.probs", "The softmax of the stored logits over the last dim.", "th.argmax(distribution.probs, dim=1)");
rule!(CATEGORICAL_LOG_PROB, "torchlower/categorical-log-prob", CategoricalLogProb, true,
    "EXTENSION: Categorical.log_prob(value)",
    "int64 indices broadcastable with the batch shape and in range (else native code refuses, as eager's check would raise); eager's broadcast and gather.",
    "probs.log_prob(action)");
rule!(CATEGORICAL_ENTROPY, "torchlower/categorical-entropy", CategoricalEntropy, true,
    "EXTENSION: Categorical.entropy()", "`-(logits.clamp(min=finfo.min) * probs).sum(-1)`, as eager.", "probs.entropy()");
rule!(CATEGORICAL_MODE, "torchlower/categorical-mode", CategoricalMode, true,
    "EXTENSION: Categorical.mode", "The most probable index, `probs.argmax(-1)` (int64).", "dist.mode");
rule!(NORMAL_LOG_PROB, "torchlower/normal-log-prob", NormalLogProb, true,
    "EXTENSION: Normal.log_prob(value)",
    "A float32 value free of NaN and broadcastable with the batch shape (else native code refuses); eager's formula op by op.",
    "probs.log_prob(action).sum(1)");
rule!(NORMAL_ENTROPY, "torchlower/normal-entropy", NormalEntropy, true,
    "EXTENSION: Normal.entropy()", "`0.5 + 0.5 * log(2π) + log(scale)` over the broadcast scale, as eager.", "probs.entropy().sum(1)");
rule!(NORMAL_STDDEV, "torchlower/normal-stddev", NormalStddev, true,
    "EXTENSION: Normal.stddev / Normal.scale", "The broadcast scale.", "dist.stddev");
rule!(TO_DTYPE, "torchlower/to-dtype", ToDtype, true,
    "EXTENSION: t.to(dtype) / t.float() / t.long() / t.int() / t.bool() / t.type(dtype) / t.type_as(y)",
    "A conversion between float32, int64, int32 and bool on the tensor's own device (a device given must be its own; `.int()` is int32): a copy, libtorch's conversion (eager's rounding toward zero to the integers). To the tensor's own dtype it is the tensor itself, as in eager.",
    "mask.to(dtype=torch.float32)");
rule!(REPEAT, "torchlower/repeat", Repeat, true,
    "EXTENSION: t.repeat(*sizes)",
    "A tensor of any dtype and Python ints (or one tuple of them), at least as many as its rank; a copy tiled along each dim.",
    "weight.view(1, 1, -1).repeat(len(x), 1, 1)");
rule!(CLAMP_TENSOR, "torchlower/clamp-tensors", ClampTensor, true,
    "EXTENSION: torch.clamp(t, min=lo, max=hi) / t.clamp(…) / clip with tensor bounds",
    "float32 tensor bounds (either may be None or omitted), broadcast as eager broadcasts them; libtorch's `clamp.Tensor` (NaN propagates).",
    "torch.clamp(x, min=lower, max=upper)");
rule!(TOPK, "torchlower/topk", Topk, true,
    "EXTENSION: torch.topk(t, k, dim=-1, largest=True, sorted=True) / t.topk(…)",
    "The `(values, indices)` pair of the k largest (or smallest) elements along a dim of a float32 tensor, libtorch's kernel as eager's (its order among equal values included): values float32 and indices int64 of the input's rank. Lowered where it is unpacked (`v, i = torch.topk(…)`), returned, or indexed (`torch.topk(…)[0]`, `.values`, `.indices`); `k` larger than the dim raises eager's RuntimeError.",
    "v, _ = torch.topk(logits, 10)");
rule!(DIV_MODE, "torchlower/div-rounding", DivMode, true,
    "EXTENSION: a // b, torch.floor_divide(a, b), torch.div(a, b, rounding_mode=\"floor\"|\"trunc\")",
    "Division rounded toward minus infinity (`//`, `floor_divide`, `\"floor\"`) or toward zero (`\"trunc\"`) of a float32 or int64 tensor by a tensor of those dtypes or a Python number on the right, with broadcasting, on the CPU: int64 when both sides are integers, float32 otherwise (eager's promotion); libtorch's `div`, its values and its errors (`ZeroDivisionError` for an integer division by zero). A number on the left stays Python; TL209 on cuda:0.",
    "dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)");
rule!(TENSORDOT, "torchlower/tensordot", Tensordot, true,
    "EXTENSION: torch.tensordot(a, b, dims=2)",
    "Two float32 tensors contracted over `dims`: a Python int `n` (the last `n` dims of `a` with the first `n` of `b`), or a pair of lists of them (`dims=([1], [0])`; a pair of plain ints is eager's TypeError); the result's rank is the ranks' sum less twice the contracted count. libtorch's kernel, values and errors (sizes that differ).",
    "torch.tensordot(x_l, kernel, dims=([1], [0]))");
rule!(EINSUM, "torchlower/einsum", Einsum, true,
    "EXTENSION: torch.einsum(equation, *operands) / torch.einsum(equation, [operands])",
    "An equation given as a string literal (letters, commas, `->`, one `...` per term) whose terms fit the operands' ranks; tensors of one dtype (float32 or int64) on the CPU. The result's rank follows from the output subscripts (explicit, or the letters used once); libtorch's kernel computes it and checks the sizes with eager's errors.",
    "rel_h = torch.einsum(\"bhwc,hkc->bhwk\", r_q, Rh)");
rule!(SORT, "torchlower/sort", Sort, true,
    "EXTENSION: torch.sort(t, dim=-1, descending=False) / t.sort(…)",
    "The `(values, indices)` pair of a float32 or int64 tensor sorted along a Python-int dim, libtorch's kernel as eager's (the order among equal values included): values of the input's type and int64 indices. Lowered where it is unpacked, returned or indexed, as topk. The `stable` keyword stays Python.",
    "sorted_logits, sorted_indices = torch.sort(scores, descending=False)");
rule!(ARGSORT, "torchlower/argsort", Argsort, true,
    "EXTENSION: torch.argsort(t, dim=-1, descending=False) / t.argsort(…)",
    "The int64 indices that sort a float32 or int64 tensor along a Python-int dim (sort's indices, libtorch's kernel).",
    "sorted_indices = torch.argsort(scores, descending=True, dim=-1)");
rule!(CUMSUM, "torchlower/cumsum", Cumsum, true,
    "EXTENSION: torch.cumsum(t, dim, dtype=None) / t.cumsum(dim, dtype=None)",
    "Running sums along a Python-int dim, libtorch's kernel: float32 stays float32, int64, int32 and bool give int64 (as eager); `dtype=torch.float32` or `torch.int64` casts the input first, as eager's (DETR's `not_mask.cumsum(1, dtype=torch.float32)`). Other dtypes stay Python.",
    "position_ids = attention_mask.long().cumsum(-1) - 1");
rule!(NANSUM, "torchlower/nansum", Nansum, true,
    "EXTENSION: torch.nansum(t, dim, keepdim=False) / t.nansum(…)",
    "The sum of a float32 tensor over an int or a tuple of dims with NaN counted as zero, libtorch's kernel; without `dim` (rank 0) stays Python.",
    "ent = -(normalized * p).nansum(-1, keepdim=True)");
rule!(MAX_DIM, "torchlower/max-dim", MaxDim, true,
    "EXTENSION: torch.max(t, dim, keepdim=False) / t.max(dim)",
    "A float32 tensor and a Python-int dim: the (values, indices) pair, taken apart (`v, i = t.max(1)`), indexed (`t.max(1)[0]`, `.values`, `.indices`) or returned. libtorch's kernel.",
    "_, predicted = torch.max(outputs, 1)");
rule!(MIN_DIM, "torchlower/min-dim", MinDim, true,
    "EXTENSION: torch.min(t, dim, keepdim=False) / t.min(dim)", "As torch.max with a dim.", "values, _ = x.min(dim=-1)");
rule!(LOGICAL_AND, "torchlower/logical-and", LogicalAnd, true,
    "EXTENSION: a & b / torch.logical_and(a, b) on bool tensors; a & b on int64 tensors", "Two bool tensors on the CPU, broadcast; a bool tensor. The operator is eager's bitwise and: on two int64 tensors, or an int64 and a bool tensor, an int64 tensor (`unfinished_sequences & ~is_done`); `torch.logical_and` takes bool tensors only here.", "(ws >= min_size) & (hs >= min_size)");
rule!(LOGICAL_OR, "torchlower/logical-or", LogicalOr, true, "EXTENSION: a | b / torch.logical_or(a, b) on bool tensors", "As `&`.", "done | (tokens == eos_id)");
rule!(LOGICAL_XOR, "torchlower/logical-xor", LogicalXor, true, "EXTENSION: a ^ b / torch.logical_xor(a, b) on bool tensors", "As `&`.", "a ^ b");
rule!(LOGICAL_NOT, "torchlower/logical-not", LogicalNot, true,
    "EXTENSION: ~m on a bool tensor / torch.logical_not(t) / t.logical_not()", "`~` of a bool tensor; `logical_not` of any tensor (`t == 0`): a bool tensor.", "~input_text_mask[:, cur_pos]");
rule!(BMM, "torchlower/bmm", Bmm, true,
    "EXTENSION: torch.bmm(a, b) / a.bmm(b)",
    "Two float32 rank-3 tensors; batch and inner sizes are checked by libtorch at run time.", "torch.bmm(q, k)");
rule!(MM, "torchlower/mm", Mm, true,
    "EXTENSION: torch.mm(a, b) / a.mm(b)",
    "Two float32 rank-2 tensors (the inner sizes are checked by libtorch at run time, with eager's message); fused with a bias and activations as `@` is.", "torch.mm(a_norm, b_norm.transpose(0, 1))");
rule!(CHUNK, "torchlower/chunk-unpacked", Chunk, true,
    "EXTENSION: a, b, … = t.chunk(n, dim) / torch.chunk(t, n, dim)",
    "`n` a Python int, `dim` an int literal (default 0); only as the value of a tuple assignment, whose names fix how many parts there are (fewer or more parts at run time raise CPython's ValueError, as the unpacking does). Each part is a view of `t`.",
    "x1, x2 = x.chunk(2, dim=-1)");
rule!(SPLIT, "torchlower/split-unpacked", Split, true,
    "EXTENSION: a, b, … = t.split(size, dim) / torch.split(t, size, dim)",
    "`size` a Python int (not a list of sizes), `dim` an int literal; as for chunk.",
    "q, k, v = qkv.split(n_embd, dim=2)");
rule!(UNBIND, "torchlower/unbind-unpacked", Unbind, true,
    "EXTENSION: a, b, … = t.unbind(dim) / torch.unbind(t, dim)",
    "`dim` an int literal (default 0); each part has one dim less; as for chunk.",
    "q, k, v = qkv.unbind(0)");
rule!(CAT, "torchlower/cat", Cat, true,
    "EXTENSION: torch.cat([a, b, …], dim) / torch.concat",
    "A list or tuple of tensors of one dtype, device and rank (a display, or a tuple local), an int literal dim (default 0); sizes are checked by libtorch.",
    "torch.cat([x, y], dim=-1)");
rule!(STACK, "torchlower/stack", Stack, true,
    "EXTENSION: torch.stack([a, b, …], dim)",
    "As for cat; the result has one dim more (up to rank 4).",
    "torch.stack((q, k), dim=0)");
rule!(CONTIGUOUS, "torchlower/contiguous", Contiguous, true,
    "EXTENSION: t.contiguous()",
    "No arguments; the tensor itself when already contiguous, else a contiguous copy (as eager).",
    "y.transpose(1, 2).contiguous()");

/// Every claim rule, in documentation order.
pub static ALL_RULES: &[&Rule] = &[
    &LINEAR_BIAS, &LINEAR_NONE, &LINEAR_BIAS_KEYWORD,
    &TENSOR_RELU, &TENSOR_SIGMOID, &TENSOR_TANH, &FUNCTION_RELU, &FUNCTION_SIGMOID, &FUNCTION_TANH, &FUNCTIONAL_RELU,
    &UNARY_ABS, &UNARY_NEG, &UNARY_NEGATIVE, &NEG_OPERATOR, &INT64_SIGN, &UNARY_SQUARE, &UNARY_EXP, &UNARY_LOG, &UNARY_SQRT,
    &GELU_NONE,
    &MATMUL_OP_2D, &MATMUL_OP_MIXED, &MATMUL_CALL_2D, &MATMUL_CALL_MIXED,
    &ADD_SAME, &ADD_BCAST, &INT64_ELEMENTWISE, &INT64_NUMBER, &SUB_SAME, &SUB_BCAST, &MUL_SAME, &MUL_BCAST, &DIV_SAME, &DIV_BCAST,
    &FUNCTION_ADD, &FUNCTION_SUB, &FUNCTION_MUL, &FUNCTION_DIV, &METHOD_ADD, &METHOD_SUB, &METHOD_MUL, &METHOD_DIV,
    &ADD_SCALAR, &SUB_SCALAR, &MUL_SCALAR, &DIV_SCALAR,
    &RELU_IN_PLACE, &ADD_IN_PLACE, &SUB_IN_PLACE, &MUL_IN_PLACE, &DIV_IN_PLACE, &DEFERRED_WRITE,
    &MEAN_DIM, &SUM_DIM, &MEAN_DIMS, &SUM_DIMS,
    &SOFTMAX_DIM, &FUNCTIONAL_SOFTMAX, &ARGMAX_DIM,
    &LAYER_NORM,
    &POW, &CLAMP, &CLAMP_MIN, &CLAMP_MAX, &MAXIMUM, &MINIMUM, &INT64_MIN_MAX, &SILU, &RSQRT, &ERF, &SOFTPLUS,
    &LOG1P, &EXPM1, &SIN, &COS, &RELU6, &HARDSWISH, &HARDSIGMOID, &MISH, &SELU, &ELU, &LEAKY_RELU, &HARDTANH,
    &CONV1D, &CONV2D, &MAX_POOL1D, &MAX_POOL2D, &AVG_POOL1D, &AVG_POOL2D, &ADAPTIVE_AVG_POOL1D, &ADAPTIVE_AVG_POOL2D, &ADAPTIVE_MAX_POOL2D, &PAD,
    &BATCH_NORM, &GROUP_NORM, &EMBEDDING, &EMBEDDING_BAG, &EQ, &NE, &LT, &LE, &GT, &GE, &MASKED_FILL, &WHERE, &ARANGE, &NARROW, &SELECT, &UNFLATTEN, &SQUEEZE, &DETACH, &DROPOUT_EVAL, &NORM, &VECTOR_NORM, &NORMALIZE, &ZEROS, &EMPTY, &ONES, &FULL, &SCALAR_TENSOR, &POW_TENSOR, &ZEROS_LIKE, &ONES_LIKE, &FULL_LIKE, &GELU_TANH, &VIEW_AS, &RESHAPE_AS, &AMAX, &AMIN, &LOGSUMEXP, &VAR, &STD, &PROD, &ARGMIN, &ALL, &ANY, &SUM_ALL, &MEAN_ALL, &MAX_ALL, &MIN_ALL, &ARGMAX_ALL, &ARGMIN_ALL, &PROD_ALL, &STD_ALL, &VAR_ALL, &LOG_SOFTMAX, &GLU, &TRIL, &TRIU, &GATHER, &INDEX_SELECT, &ONE_HOT, &CROSS_ENTROPY, &TENSOR_OF_INTS, &WHERE_NONZERO, &MULTINOMIAL, &RMS_NORM, &SDPA, &MHA, &CONV1D_PADDING, &CONV2D_PADDING, &CONV_TRANSPOSE1D, &CONV_TRANSPOSE2D, &INTERPOLATE, &ADDMM, &BADDBMM, &CATEGORICAL, &NORMAL, &CATEGORICAL_PROBS, &CATEGORICAL_LOG_PROB, &CATEGORICAL_ENTROPY, &CATEGORICAL_MODE, &NORMAL_LOG_PROB, &NORMAL_ENTROPY, &NORMAL_STDDEV, &TO_DTYPE, &REPEAT, &CLAMP_TENSOR, &MAX_DIM, &TOPK, &MIN_DIM, &LOGICAL_AND, &LOGICAL_OR, &LOGICAL_XOR, &LOGICAL_NOT, &BMM, &MM, &CLONE, &ROLL, &SCATTER, &ISIN, &SORT, &ARGSORT, &CUMSUM, &NANSUM, &ATAN, &SIGN, &FLOOR, &OUTER, &LINSPACE, &REMAINDER, &MESHGRID, &EINSUM, &FLIP, &REPEAT_INTERLEAVE, &TENSORDOT, &DIV_MODE, &TENSOR_TRUTH, &UNFOLD,
    &VIEW, &RESHAPE, &EXPAND, &EXPAND_AS, &PERMUTE, &TRANSPOSE, &MATRIX_T, &UNSQUEEZE, &FLATTEN, &INDEX, &ADVANCED_INDEXING, &INDEX_ASSIGN, &CHUNK, &SPLIT, &UNBIND, &CAT, &STACK, &CONTIGUOUS,
];

// ---------------------------------------------------------------------------------------------
// Extensions that widen where rules apply
// ---------------------------------------------------------------------------------------------

pub static ALL_EXTENSIONS: &[Extension] = &[
    Extension {
        id: "torchlower/ext-bare-binop-receiver",
        summary: "Methods on bare binary-operation receivers",
        explanation: "The seed needed a named temporary before calling a method on `a @ b + c`. Here any claimed tensor expression can be a receiver; Python evaluates the receiver once, and so does the emitted Rust.",
        example: "return (x @ w + b).relu()",
    },
    Extension {
        id: "torchlower/ext-linear-bias-keyword",
        summary: "Tensor-valued `bias=` keyword of F.linear",
        explanation: "See rule torchlower/functional-linear-bias-keyword-f32-2d.",
        example: "F.linear(x, w, bias=b)",
    },
    Extension {
        id: "torchlower/ext-flow-sensitive-types",
        summary: "Flow-sensitive local types",
        explanation: "A name may be re-bound to a value of another type (another rank, or a scalar); each use sees the type of the binding that reaches it. After if/else, a name keeps its type only when every branch agrees.",
        example: "h = x.sum(dim=1)  # rank 1 now, h was rank 2",
    },
    Extension {
        id: "torchlower/ext-negative-static-dim",
        summary: "Negative literal dims",
        explanation: "`dim=-1` is normalised against the static rank exactly as PyTorch does (rank 2: -1 is 1, -2 is 0).",
        example: "logits.softmax(dim=-1)",
    },
    Extension {
        id: "torchlower/ext-ranks-3-4",
        summary: "Every rule on ranks 3 and 4",
        explanation: "TensorF32Cpu3D/4D (and int64/bool of ranks 1–4) are types: elementwise ops keep the rank, arithmetic broadcasts between any ranks as eager does (the result has the larger rank; sizes that do not broadcast raise eager's RuntimeError), matmul is batched (a rank-1 side drops its dim), F.linear takes an input of rank 2–4, sum/mean/softmax/argmax take any literal dim in range, and argmax gives int64 of rank r-1 (r with keepdim). The rules keep their seed ids (`…-rank1-2`, `…-2d`), which name the seed's rank matrix. On cuda:0, ranks 3–4 take the same forms wherever the op has a CUDA kernel.",
        example: "def pool(x: TensorF32Cpu3D) -> TensorF32Cpu2D: return F.linear(x, w).relu().mean(dim=1)",
    },
    Extension {
        id: "torchlower/ext-cuda0-full-surface",
        summary: "Every rule on cuda:0 tensors",
        explanation: "TensorF32Cuda0_1D–4D operands get the CPU claim surface of every op with a CUDA kernel (except argmax as a result, which has no int64 CUDA type); emitted code calls `tl::cuda::ops::*`. Mixing CPU and CUDA operands is rejected (TL204); ops without a CUDA kernel are rejected (TL209).",
        example: "def f(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D) -> TensorF32Cuda0_2D: return (x @ w).relu()",
    },
];

// ---------------------------------------------------------------------------------------------
// Diagnostic codes
// ---------------------------------------------------------------------------------------------

code!(SYNTAX_ERROR, "TL001", Module, Error,
    "Python syntax error",
    "The file does not parse as Python 3; no function in it can be analyzed.",
    "def f(x:\n    return x", "Fix the syntax error; the file must run under CPython 3.11.");
code!(TOO_DEEP, "TL002", Module, Error,
    "Nesting too deep",
    "Brackets nested deeper than 200 or indentation deeper than 100 levels (CPython refuses both too), more than 200 prefix operators in a row or 2,000 operators / attribute dots / chained calls in one statement refuse the file (module diagnostic); statements or expressions nested deeper than 100 levels (including long elif chains and method chains) refuse the function. The analyzer never risks its stack on hostile input.",
    "((((((((...))))))))  # 5,000 levels", "Split the expression into named temporaries.");
code!(NOT_UTF8, "TL003", Module, Error,
    "Source is not valid UTF-8",
    "The host passed bytes that are not UTF-8; invalid sequences were replaced before analysis.",
    "b\"\\xff\"", "Pass the source as text.");

code!(PARAM_UNANNOTATED, "TL101", Signature, Warning,
    "Parameter without annotation, or annotated `torch.Tensor`",
    "Native code needs the dtype, device and rank of every tensor parameter, which neither a missing annotation nor `torch.Tensor` / `Optional[torch.Tensor]` (by any import of it, also as a postponed string) says; sites on such values are not covered. Whether an `Optional[<marker>]` (or `Optional[int]` / `Optional[float]` / `Optional[bool]`) parameter is None or a value only the call says: a function with up to 3 of them (and no other open parameter) is walked once per None / value combination and is native when every copy is, its entry running the copy for the arguments given; the note stays, with the reason, when a copy falls back. `torchlower.compile` specialises these parameters on each call's argument types instead (the annotation is then the argument's marker, or `None` for a None argument, which makes `x is None` a constant).",
    "def f(x, y: torch.Tensor): ...", "Call the function through `torchlower.compile` (it specialises), or annotate with a torchlower.types marker, `int`, `float` or `bool`.");
code!(PARAM_UNSUPPORTED, "TL102", Signature, Warning,
    "Unsupported parameter annotation",
    "Parameter types with a boundary check: the torchlower.types / rextio_torch.types markers (float32 on the CPU, ranks 0–6; float32 on cuda:0, ranks 1–4; int64 and bool on the CPU, ranks 0–4; int32 on the CPU, ranks 1–4), `int`, `float` and `bool`. `str` and containers say too little (or something else) about the value (`torch.Tensor`, `Optional[<marker>]` and `Optional[int]` are TL101: specialised).",
    "def f(x: TensorF32Cpu2D, name: str): ...", "Use the marker of the tensor's dtype, device and rank (`TensorF32Cpu2D`, `TensorI64Cpu1D`, `TensorF32Cuda0_3D`, …), or `int`, `float`, `bool`.");
code!(RETURN_UNANNOTATED, "TL103", Signature, Warning,
    "Missing return annotation, not inferable",
    "Without a return annotation the return type is inferred from the first `return` of a typed value (each other `return` must agree, TL401), and is None when the end (or a bare `return`) is reached with no `return` of a value; a function whose returns carry no type (only unresolved values) and whose end is never reached has none to build the boundary with.",
    "def f(x: TensorF32Cpu2D):\n    raise ValueError(x)", "Return a typed value, or add `-> TensorF32Cpu2D` (or another supported type).");
code!(RETURN_UNSUPPORTED, "TL104", Signature, Warning,
    "Unsupported return annotation",
    "Returned natively: the tensor markers, `int`, `float`, `bool`, and tuples of them (`tuple[...]` / `typing.Tuple[...]`, up to 8 elements). The open forms real code writes are read as promises, the type itself inferred from the `return`s and checked against them (TL401): `torch.Tensor`, `tuple[torch.Tensor, int]`, `Tuple[torch.Tensor, ...]`, a bare `tuple`, `Optional[X]` / `X | None` as `X`, and their string spellings; `None` for a function run for its writes (its end, a bare `return` and `return None` return None). Lists, dicts, strings and other unions are not.",
    "def f(x: TensorF32Cpu2D) -> dict: ...", "Return a tensor, a number, a bool or a tuple of them, or drop the annotation to have the type inferred from the `return`.");
code!(PARAM_DEFAULT, "TL105", Signature, Warning,
    "Default argument values",
    "A literal default of the parameter's type (`n: int = 3`, `eps: float = 1e-5`, `flip: bool = False`; an int literal for a float parameter reaches native code as Python's int, which the boundary refuses, so auto mode reruns Python when it is used) is applied by the host before the native call. A `None` default is accepted for any parameter: a call that omits the argument passes None, which the boundary of a tensor or number refuses (auto mode reruns Python), and `torchlower.compile` specialises an open parameter on a None argument (the function is analyzed with `mask is None` true). Any other default (a tensor, an expression) makes the function fall back.",
    "def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D = torch.zeros(3)): ...", "Remove the default and pass the value explicitly, or make it a literal of the parameter's type.");
code!(PARAM_VARIADIC, "TL106", Signature, Warning,
    "*args, **kwargs or keyword-only parameters",
    "The generated function takes positional parameters only.",
    "def f(*xs): ...", "Use plain positional parameters.");
code!(DECORATOR, "TL107", Signature, Warning,
    "Unsupported decorator",
    "A decorator can replace the function; only `torchlower.native` (or `native` imported from torchlower) and the grad-mode decorator of inference code (`torch.no_grad()`, called or not; native results never carry autograd history) are understood. `torch.inference_mode()` is not: its results are inference tensors, which native ones are not.",
    "@functools.lru_cache\ndef f(...): ...", "Remove the decorator or keep the function on the Python route.");
code!(ASYNC_FN, "TL108", Signature, Warning,
    "Async function or type parameters",
    "Coroutines and generic functions are not lowered.",
    "async def f(x): ...", "Use a plain `def`.");
code!(MODULE_FORM, "TL109", Signature, Warning,
    "nn.Module form the host does not rewrite",
    "Produced by the host, not by this analyzer: `torchlower.compile(module)` and `torchlower check FILE.py:ClassName` rewrite a live instance's `forward` into top-level functions (its tensors become parameters, known leaf submodules their functional form, `for` over a ModuleList unrolled). A form with no rewriting (a submodule used as a value rather than called, an attribute of another type, an unknown built-in leaf, a tensor of the instance that no marker describes) makes the whole module run eagerly.",
    "def forward(self, x):\n    layers = self.layers  # a ModuleList used as a value\n    return layers[0](x)", "Call submodules directly (`self.layers[0](x)`, `for layer in self.layers:`), hold hyper-parameters as int/float/bool attributes, and keep the instance's tensors float32, int64, int32 or bool.");

code!(NOT_F32_OPERAND, "TL200", Site, Error,
    "Operand of another type than the op takes",
    "The op takes float32 tensors here; int64, int32 and bool tensors only where its rule says so (comparisons, indexing, conversions, `+ - * /` of integer tensors, `argmax`, `all`/`any`; `where` of int64). A Python number or an integer/bool tensor in a float32 position is not claimed: eager would promote or raise, and that is not modelled per op.",
    "torch.exp(2)  /  labels.relu()  # labels int64", "Pass a float32 tensor, or convert first with `.float()` (claimed: torchlower/to-dtype).");
code!(BAD_KEYWORD, "TL201", Site, Error,
    "Unsupported keyword option",
    "Options such as `out`, `alpha`, `rounding_mode`, `dtype` or unknown keywords change or widen the semantics and are not lowered.",
    "torch.add(a, b, alpha=2)  /  torch.div(a, b, rounding_mode=\"trunc\")", "Drop the option or compute it with separate ops.");
code!(BAD_ARITY, "TL202", Site, Error,
    "Unsupported arguments",
    "Wrong number of positional arguments, starred arguments, or arguments passed to a zero-argument method.",
    "h.relu(1)  /  torch.relu(*xs)", "Use the exact form shown in the rule.");
code!(IN_PLACE, "TL203", Site, Error,
    "In-place operation",
    "An in-place op (`relu_`, `add_`, `inplace=True`, `h += b`, `t[i] = v`) that is not lowered: in-place ops other than relu_/add_/sub_/mul_/div_, `+= -= *= /=`, `clamp_`, index writes and `inplace=True` of F.relu/silu/relu6/hardswish/hardsigmoid/mish/selu (`x.lerp_(y, w)`, `|=`), or a write into a tensor that may be a parameter's where the function cannot write into its arguments natively (a local that a loop may rebind to one, a function that would also refuse a path at run time). On a fresh local the lowered ones are claimed (torchlower/…-in-place-fresh; the activations under their own rule, with eager's in-place kernel); on an argument, as eager makes them (TL212).",
    "x.relu_()  /  x += b  (x a parameter)", "Use the out-of-place form (`h = h.relu()`, `h = h + b`), or update a fresh local.");
code!(ARGUMENT_WRITES, "TL212", Site, Info,
    "Writes into its arguments, as eager does",
    "The function writes into a tensor argument or a view of one (`tokens[:, pos] = next_token`, `cache_k[:b, s:e] = xk`, `emb[mask == 0] = -1e9`), which is what it is for: eager changes the caller's tensor. Native code then writes into the same tensor, in the same order, and stays native. The native call refuses (ValueError, before any work; auto mode runs the Python function) when a tensor argument requires grad, where eager's in-place rules on autograd apply. Such a function is kept native only when none of its claims can refuse a call at run time (no TL404 path, deferred write, `squeeze(dim)`, training dropout, distribution check or `torch.tensor` of a possibly empty list; else TL203 says so), so an error after a write surfaces as eager's does instead of rerunning the call: auto mode never runs Python on arguments native code changed. The one difference left: an int overflow past 2^63 (OverflowError) after a write is raised, where Python's ints would go on.",
    "def fill(t: TensorF32Cpu3D, m: TensorBoolCpu3D) -> TensorF32Cpu3D:\n    t[m] = -1e9\n    return t.max(1)[0]", "Nothing to do; to keep the argument, write into a copy (`t = t.clone()`).");
code!(MIXED_DEVICE, "TL204", Site, Error,
    "Mixed CPU and CUDA operands",
    "Operands of one op must live on the same device; eager PyTorch raises for most mixes and transfers are not lowered.",
    "cpu_x @ cuda_w", "Annotate all operands with the same device.");
code!(DEVICE_TRANSFER, "TL205", Site, Error,
    "Device transfer or unsupported conversion",
    "`.cuda()`, `.cpu()`, `.to(device)` of another device, and conversions to a dtype without a tensor type here (float64, float16, int8, …) are not lowered. `.to(dtype)`, `.float()`, `.long()`, `.int()`, `.bool()`, `.type(dtype)` and `.type_as(y)` between float32, int64, int32 and bool, and `.to(\"cpu\")` of a CPU tensor, are claimed.",
    "x.cuda()  /  x.to(torch.float64)", "Pass tensors that already live on the annotated device, in a dtype with a marker; convert between float32, int64, int32 and bool with `.float()`, `.long()`, `.int()`, `.bool()`.");
code!(VIEW_OP, "TL206", Site, Error,
    "View form not lowered",
    "Views are claimed: `view`, `view_as`, `reshape`, `reshape_as`, `transpose` (and `swapaxes`/`swapdims`), `permute`, `t`, `.T` of rank ≤ 2, `.mT`, `unsqueeze`, `squeeze(dim)`, `flatten`, `unflatten`, `narrow`, `select`, `expand`, `expand_as`, `chunk`, `split`, `unbind` and basic indexing, aliasing their base as eager's do. These view forms are not: `unfold`, `movedim`, `as_strided`, `.H`/`.mH`, `.real`/`.imag`/`.data`, and `.T` of rank > 2 (deprecated in eager).",
    "x.movedim(1, -1)  /  x.unfold(1, 2, 1)  /  x.T  # x rank 3", "Write it with a claimed view: `x.permute(...)` for `movedim` and for `.T` of rank > 2.");
code!(RANK0_RESULT, "TL207", Site, Error,
    "Result would be rank 0, or a rank-0 operand outside elementwise ops",
    "Rank-0 types exist for float32, int64 and bool on the CPU (`TensorF32Cpu0D`, `TensorI64Cpu0D`, `TensorBoolCpu0D`: `torch.full([], v)`, `x[0, 0]`, `x.sum()`, `lengths.max()`, `q.argmax()`), and a rank-0 operand is claimed by elementwise ops, comparisons, `torch.where` and `.item()` only. Rejected: int32 or cuda:0 rank-0 results (`ids32.max()`, a reduction of a cuda:0 tensor over every element), `(values, indices)` of a rank-0 tensor, a dot product of two rank-1 tensors, a loss with its default `reduction=\"mean\"` (`F.cross_entropy`), a rank-1 `sum`/`mean` over its one dim given as an int (the seed's rule; a tuple of dims or no dim is claimed), and rank-0 operands of the other lanes (`F.normalize(s)`, `torch.stack([s, t])`, `len(s)`).",
    "a_1d @ b_1d  /  v.mean(dim=0)", "Keep a dimension (`keepdim=True`, `reduction=\"none\"`), or return the result through a rank-1 tensor (`(a_1d * b_1d).sum(dim=0, keepdim=True)`).");
code!(BAD_RANKS, "TL208", Site, Error,
    "Unsupported operand ranks",
    "The operand ranks are outside the rank matrix of the op.",
    "F.linear(x_1d, w, b)", "See the rule's rank matrix.");
code!(CUDA_UNSUPPORTED, "TL209", Site, Error,
    "Not lowered on CUDA yet",
    "The CUDA kernels take float32 tensors of ranks 1–4: elementwise ops (with Python numbers too), pow for the exponents 2, 3, 0.5, -1, -2, 1, clamps, maximum/minimum, matmul/bmm/linear (batched), sum/mean/softmax/argmax over any dim, views (metadata only) and reshape/contiguous/cat/stack (a copy kernel). An op without a kernel of ours (its row in docs/rules.md has no CUDA kernel: the libtorch-backed activations, norms, convolution, …), `t ** e` for another or a run-time exponent, an in-place op, or a bool result on `cuda:0` stays Python; the same op on CPU types is claimed (docs/gpu.md lists what is CPU-only).",
    "x: TensorF32Cuda0_3D  ...  F.silu(x)   /   x ** 2.5", "Use the CPU types, or keep CUDA code to the ops with CUDA kernels (docs/rules.md).");
code!(ADVANCED_INDEX, "TL211", Site, Error,
    "Advanced indexing",
    "The advanced indexing forms not lowered: a float tensor or a Python bool as an index, a list of non-ints, a second `...`, an index tensor on another device or on cuda:0, a bool mask together with other index tensors, and assignment through an index (`x[mask] = v`). Int64 index tensors, bool masks and lists of ints are claimed (torchlower/tensor-advanced-indexing).",
    "x[float_tensor]  /  x[mask, idx]  /  logits[logits < v] = -inf", "Use int64 indices or one bool mask, or `torch.where`/`masked_fill`.");
code!(LINEAR_KEYWORD_OPERAND, "TL210", Linear, Error,
    "F.linear input/weight passed as keywords",
    "Only the bias may be a keyword (`bias=b` or `bias=None`); input and weight must be positional.",
    "F.linear(input=x, weight=w)", "Pass input and weight positionally.");
code!(RELU_INPLACE, "TL220", Activations, Error,
    "F.relu inplace must be omitted or the keyword literal False",
    "`inplace=True` mutates the input; a positional or non-literal `inplace` cannot be proven False.",
    "F.relu(h, inplace=True)  /  F.relu(h, True)", "Omit `inplace`.");
code!(GELU_APPROXIMATE, "TL230", Gelu, Error,
    "GELU approximation that is not a known literal",
    "`approximate` must be the keyword literal \"none\" (exact) or \"tanh\" (torchlower/gelu-tanh); a positional, dynamic or unknown `approximate` cannot be proven either.",
    "F.gelu(h, approximate=mode)  /  F.gelu(h, \"none\")", "Pass `approximate=\"none\"` or `approximate=\"tanh\"` as a keyword literal.");
code!(GELU_METHOD, "TL231", Gelu, Error,
    "GELU method or module form",
    "Only the functional `torch.nn.functional.gelu(t)` is claimed.",
    "h.gelu()", "Call `F.gelu(h)`.");
code!(ARITH_METHOD, "TL240", Binops, Error,
    "Arithmetic method with options",
    "`.add/.sub/.mul/.div` with one tensor or number are claimed (torchlower/method-…); with options (`alpha`, `rounding_mode`, `out`) or other arguments they stay on Python.",
    "a.add(b, alpha=2)  /  a.div(b, rounding_mode=\"floor\")", "Use the operator form, or compute the option with separate ops.");
code!(INT64_ARITH, "TL241", Binops, Error,
    "Arithmetic on integer tensors",
    "int64 and int32 tensors take `+ - * /` with another integer or float32 tensor or a Python number (torchlower/tensor-arith-int64, …-int64-number); in a matmul, or in the other ops of float32, they are not claimed.",
    "labels @ w", "Convert with `.float()` first.");
code!(SCALAR_OPERAND, "TL242", Binops, Error,
    "Tensor arithmetic with this scalar operand",
    "Python int and float operands are claimed (`x * 2.0`, `1 - x`); a bool operand (`x * True`), or a number first in the function form (`torch.add(2.0, x)`, which eager rejects too), is not.",
    "x * True  /  torch.mul(2.0, x)", "Use an int or float, or the operator form.");
code!(DIM_MISSING, "TL250", Reductions, Error,
    "Reduction without dim",
    "`sum`, `mean`, `max`, `min`, `argmax`, `argmin`, `prod`, `std` and `var` without a dim reduce every element (claimed: a rank-0 result); the other reductions (`amax`, `amin`, `logsumexp`, `norm`, `all`/`any` outside a condition, `nansum`) are claimed over the dims they are given only.",
    "h.amax()", "Reduce over dims: `h.amax(dim=-1)`, or every dim kept as size 1 with `h.amax(dim=(0, 1), keepdim=True)`.");
code!(DIM_NOT_LITERAL, "TL251", Reductions, Error,
    "dim not known while analysing",
    "The result's rank depends on the dims, so they must be static: an int literal, or a tuple or list of int literals (sum, mean, amax, amin, logsumexp, var, std, norm). A dim read from a parameter or computed at run time is not lowered for these ops (unsqueeze, chunk, split and unbind take run-time dims).",
    "h.mean(dim=d)  # d an int parameter", "Write the dim as a literal (negative literals count from the end: `dim=-1`).");
code!(DIM_OUT_OF_RANGE, "TL252", Reductions, Error,
    "dim out of range",
    "The dim must address an existing dimension of the operand.",
    "v.mean(dim=1, keepdim=True)  # v is rank 1", "Use a dim in range.");
code!(DIM_DUPLICATE, "TL253", Reductions, Error,
    "dim given twice",
    "A positional and a keyword dim.",
    "t.sum(0, dim=1)", "Give dim once.");
code!(KEEPDIM_POSITIONAL, "TL254", Reductions, Error,
    "Positional keepdim",
    "keepdim must be omitted or a keyword bool literal.",
    "t.mean(0, True)", "Write `keepdim=True`.");
code!(KEEPDIM_NOT_LITERAL, "TL255", Reductions, Error,
    "keepdim is not a bool literal",
    "keepdim changes the result rank and must be known statically.",
    "t.mean(dim=0, keepdim=flag)", "Write `keepdim=True` or `keepdim=False`.");
code!(SOFTMAX_DTYPE, "TL260", Classification, Error,
    "softmax dtype override",
    "A dtype other than the literal None (F.softmax only) changes the result type.",
    "F.softmax(x, dim=1, dtype=torch.float64)", "Drop `dtype`.");
code!(ARGMAX_RESULT_TYPE, "TL261", Classification, Error,
    "argmax result type unavailable",
    "argmax gives an int64 tensor, and on cuda:0 there is no int64 CUDA type.",
    "logits.argmax(dim=1)  # logits on cuda:0", "Run the argmax on CPU types.");

code!(UNSUPPORTED_STATEMENT, "TL301", Statement, Warning,
    "Statement not lowerable",
    "Lowered statements: assignments (to names, tuple unpacking into names, through an index of a fresh local), augmented assignments, if/elif/else, `for` over `range()` or a list/tuple display, while, break/continue, return, pass, assert, `raise` of ValueError/TypeError/RuntimeError/IndexError/NotImplementedError/AssertionError with a string literal or an f-string of ints, and `with` blocks of torch.no_grad/inference_mode/autocast(enabled=False). `try`, a re-raise or `raise … from …`, other exception classes, `del`, `match`, `import`, and other `with` blocks are not. An expression statement is lowered when its value is (evaluated and discarded as Python does, errors included: `mask.type(torch.float32)` whose result is dropped); one whose value is not lowered is reported here.",
    "try: ...  /  raise MyError(\"bad shape\") from e  /  del h", "Move the statement out of the native function (validate arguments before the call; an `assert` with a message is lowered).");
code!(UNSUPPORTED_TARGET, "TL302", Statement, Warning,
    "Assignment target not lowerable",
    "Plain names, tuple unpacking into names and assignment through an index of a fresh local are lowered; attributes (`self.cache = h`), starred targets (`first, *rest = xs`), chained assignment (`a = b = x`) and assignment through an index of a parameter are not.",
    "self.cache = h  /  a = b = x  /  first, *rest = xs", "Assign plain names (`a = x` then `b = x`) and return what the caller should keep.");
code!(UNSUPPORTED_EXPRESSION, "TL303", Statement, Warning,
    "Expression not lowerable",
    "No native form: calls of functions other than torch ops, module-level functions and the lowered builtins (`len`, `min`, `max`, `float`, `isinstance`, and `range` in a `for`), dict and set displays, strings outside static uses, attribute reads other than shapes, dtypes and devices, and distribution attributes not listed.",
    "d = {\"h\": x}  /  n = sum(sizes)", "Compute it outside the native function and pass the result in as a parameter.");
code!(TENSOR_CONDITION, "TL304", Statement, Warning,
    "Tensor-dependent control flow",
    "An if/while condition that depends on tensor data needs a device sync and is not lowered.",
    "if x.sum(dim=0) > 0: ...", "Decide with int/bool parameters.");
code!(UNSUPPORTED_CONDITION, "TL305", Statement, Warning,
    "Condition of unknown type",
    "Conditions must be int or bool expressions.",
    "if flag_of_unknown_type: ...", "Annotate the value as int or bool.");
code!(UNSUPPORTED_LOOP, "TL306", Statement, Warning,
    "Loop form not lowerable",
    "`for` iterates `range()` (1–3 int arguments) or a list/tuple display (unrolled, at most 256 iterations) into a name; iterating a tensor, a parameter or a generator, and `for ... else`, are not lowered; nor `break`/`continue` outside a loop (CPython's SyntaxError).",
    "for row in x: ...", "Loop over `range(x.shape[0])` and index (`x[i]`), or write the items as a list display.");
code!(UNBOUND_NAME, "TL307", Statement, Warning,
    "Name possibly unbound or not local",
    "The name is read where it may not be assigned on every path (Python would raise), or it is a module global / builtin with no native form.",
    "if c: y = x\nreturn y", "Assign the name on every path before reading it.");
code!(SCALAR_OPERATOR, "TL308", Statement, Warning,
    "Scalar operator not lowerable",
    "Bit operations on ints, `is`/`in` outside static values, `//` and `%` on floats, `**` on ints with a non-literal or negative exponent (an int or a float depending on its sign), and and/or on ints have no native form.",
    "t % 2.0  /  n ** k  /  n & mask", "Use a literal exponent, or compute the value outside the native function and pass it in.");
code!(LOOP_TYPE_CHANGE, "TL309", Statement, Warning,
    "Type changes across loop iterations",
    "A name bound before a loop gets a different type inside it, so its type at the loop head is not static.",
    "for i in range(n): h = h.sum(dim=1)", "Use a fresh name inside the loop.");
code!(NESTED_SCOPE, "TL310", Statement, Warning,
    "Nested function, class, lambda, comprehension, global or nonlocal",
    "Closures and scope declarations are not lowered. A list comprehension is unrolled when it has one `for` clause over items known while analysing (a tuple or list of known length, `enumerate`/`zip` of those, `range` of known bounds) that are names, literals or shape sizes, and its `if` clauses are known while analysing; others are reported here.",
    "def f(...):\n    def g(): ...", "Move the inner function to module level; iterate a tuple or list of names in a comprehension.");
code!(SITE_NOT_COVERED, "TL311", Statement, Info,
    "Torch site not covered",
    "The site is not claimed: an unrelated torch API, a module call, or operands of unresolved type. The function stays on Python.",
    "torch.subtract(a, b)  /  unannotated.relu()", "Write it with claimed ops (docs/rules.md; the message names close claimed spellings), annotate the operands, or compute it outside the native function.");
code!(INT_OUT_OF_RANGE, "TL312", Statement, Warning,
    "Integer literal outside 64 bits",
    "Native ints are 64-bit (checked); larger literals stay on Python.",
    "n = 2 ** 70", "Use a smaller literal.");

code!(RETURN_MISMATCH, "TL401", Return, Warning,
    "Returned value does not match the annotation",
    "The type of the returned expression (dtype, device, rank, or scalar kind) differs from the return annotation.",
    "def f(x: TensorF32Cpu2D) -> TensorF32Cpu1D: return x.relu()", "Fix the annotation or the expression.");
code!(MISSING_RETURN, "TL402", Return, Warning,
    "Function can end without return",
    "Some path reaches the end of the function, which returns None, where the function returns a value on others (or its annotation says a type other than None).",
    "def f(x: ..., c: bool) -> TensorF32Cpu2D:\n    if c: return x", "Return on every path.");
code!(RETURN_NONE, "TL403", Return, Warning,
    "Bare return",
    "`return` without a value returns None, where the function returns a value on other paths (or its annotation says a type other than None).",
    "return", "Return a value of the annotated type.");
code!(RETURN_PATH_REFUSED, "TL404", Return, Info,
    "A return path is refused at run time",
    "A `return` on a run-time branch gives another type than the function's return annotation (diffusers' `head_to_batch_dim` returns rank 4 when `out_dim != 3` under `-> torch.Tensor` written as rank 3). The function stays native: that path raises a ValueError naming the two types, which `auto` mode answers by running the Python function for that call, as eager returns it. The other paths return natively.",
    "def f(x: TensorF32Cpu4D, flat: bool) -> TensorF32Cpu3D:\n    if flat:\n        x = x.flatten(2)\n    return x", "Nothing to do for `auto` mode; in `native` mode, call the function only on the annotated path, or annotate the return `torch.Tensor`-free per path.");

/// The claims whose native code may refuse a call at run time (a `ValueError` that auto mode
/// answers by running Python): a function that writes into its arguments (TL212) must have
/// none, since no call may be rerun after a write.
pub static REFUSES_AT_RUN_TIME: &[&Rule] = &[
    &DEFERRED_WRITE, &TENSOR_OF_INTS, &SQUEEZE, &DROPOUT_EVAL,
    &CATEGORICAL, &NORMAL, &CATEGORICAL_PROBS, &CATEGORICAL_LOG_PROB, &CATEGORICAL_ENTROPY, &CATEGORICAL_MODE, &NORMAL_LOG_PROB, &NORMAL_ENTROPY, &NORMAL_STDDEV,
];

/// Every diagnostic code, in documentation order.
pub static ALL_CODES: &[&Code] = &[
    &SYNTAX_ERROR, &TOO_DEEP, &NOT_UTF8,
    &PARAM_UNANNOTATED, &PARAM_UNSUPPORTED, &RETURN_UNANNOTATED, &RETURN_UNSUPPORTED, &PARAM_DEFAULT, &PARAM_VARIADIC, &DECORATOR, &ASYNC_FN, &MODULE_FORM,
    &NOT_F32_OPERAND, &BAD_KEYWORD, &BAD_ARITY, &IN_PLACE, &ARGUMENT_WRITES, &MIXED_DEVICE, &DEVICE_TRANSFER, &VIEW_OP, &RANK0_RESULT, &BAD_RANKS, &CUDA_UNSUPPORTED, &ADVANCED_INDEX,
    &LINEAR_KEYWORD_OPERAND, &RELU_INPLACE, &GELU_APPROXIMATE, &GELU_METHOD,
    &ARITH_METHOD, &INT64_ARITH, &SCALAR_OPERAND,
    &DIM_MISSING, &DIM_NOT_LITERAL, &DIM_OUT_OF_RANGE, &DIM_DUPLICATE, &KEEPDIM_POSITIONAL, &KEEPDIM_NOT_LITERAL,
    &SOFTMAX_DTYPE, &ARGMAX_RESULT_TYPE,
    &UNSUPPORTED_STATEMENT, &UNSUPPORTED_TARGET, &UNSUPPORTED_EXPRESSION, &TENSOR_CONDITION, &UNSUPPORTED_CONDITION, &UNSUPPORTED_LOOP, &UNBOUND_NAME, &SCALAR_OPERATOR, &LOOP_TYPE_CHANGE, &NESTED_SCOPE, &SITE_NOT_COVERED, &INT_OUT_OF_RANGE,
    &RETURN_MISMATCH, &MISSING_RETURN, &RETURN_NONE, &RETURN_PATH_REFUSED,
];

/// The registry as JSON (for the playground's `rules()` export).
pub fn registry_json() -> String {
    #[derive(Serialize)]
    struct Registry {
        rules: &'static [&'static Rule],
        extensions: &'static [Extension],
        codes: &'static [&'static Code],
    }
    serde_json::to_string_pretty(&Registry { rules: ALL_RULES, extensions: ALL_EXTENSIONS, codes: ALL_CODES })
        .unwrap_or_else(|_| String::from("{}"))
}

/// `docs/rules.md`, generated (`torchlower-analyze --rules-md > docs/rules.md`).
pub fn rules_markdown() -> String {
    let mut out = String::new();
    out.push_str("# torchlower rules and diagnostic codes\n\n");
    out.push_str("<!-- Generated from analyzer-wasm/src/rules.rs; do not edit. Regenerate with:\n");
    out.push_str("     cargo run -q -p torchlower-analyzer --bin torchlower-analyze -- --rules-md > docs/rules.md -->\n\n");
    out.push_str("A site is **claimed** when it matches a rule below, **rejected** with a code when it is a recognised\n");
    out.push_str("form outside the surface, and **not covered** when it is unrelated or its operand types are unknown.\n");
    out.push_str("A function routes native only when every site is claimed and every statement is lowerable.\n\n");
    out.push_str(&op_table_markdown());
    out.push_str("\n## Claim rules\n");
    let mut lane = None;
    for rule in ALL_RULES {
        if lane != Some(rule.lane()) {
            lane = Some(rule.lane());
            out.push_str(&format!("\n### Lane: {}\n", rule.lane().title()));
        }
        out.push_str(&format!("\n#### `{}`{}\n\n{}\n\n{}\n\nLowers to `{}`.\n\n```python\n{}\n```\n",
            rule.id, if rule.extension { " (extension)" } else { "" }, rule.summary, rule.explanation, rule.op.name(), rule.example));
    }
    out.push_str("\n## Extensions beyond the seed surface\n");
    for ext in ALL_EXTENSIONS {
        out.push_str(&format!("\n### `{}`\n\n{}. {}\n\n```python\n{}\n```\n", ext.id, ext.summary, ext.explanation, ext.example));
    }
    out.push_str("\n## Diagnostic codes\n");
    let mut area = None;
    for code in ALL_CODES {
        if area != Some(code.area) {
            area = Some(code.area);
            out.push_str(&format!("\n### {}\n", code.area.title()));
        }
        let sev = match code.severity { Severity::Error => "error", Severity::Warning => "warning", Severity::Info => "info" };
        out.push_str(&format!("\n#### {} — {} ({})\n\n{}\n\n```python\n{}\n```\n\nHint: {}\n",
            code.code, code.summary, sev, code.explanation, code.example, code.hint));
    }
    out
}

/// The op table as a markdown table: every op with its spellings, lane, rules, backend
/// function and kernels.
fn op_table_markdown() -> String {
    let code = |items: &[&str]| items.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ");
    let mut out = String::from("## Ops\n\nEvery claimed op, from the op table (`native-backend/ops/src/lib.rs`). CPU: `tl::ops::<op>`, with the elementwise ops also run as elements of the fused kernels (`tl::fused::Unary`/`Binary`); cuda:0: `tl::cuda::ops::<op>` on the PTX kernel named.\n\n");
    out.push_str("| op | lane | Python spellings | rules | fused element (`tl::fused`) | CUDA kernel |\n|---|---|---|---|---|---|\n");
    for row in torchlower_ops::TABLE {
        let mut spellings: Vec<String> = row.functions.iter().map(|f| format!("`{f}`")).collect();
        spellings.extend(row.methods.iter().map(|m| format!("`Tensor.{m}`")));
        spellings.extend(row.operators.iter().map(|o| format!("`{o}`")));
        let rules: Vec<&str> = ALL_RULES.iter().filter(|r| r.op == row.op).map(|r| r.id).collect();
        let fused = match (row.op.unary(), row.op.binary()) {
            (Some(u), _) => format!("`Unary::{u:?}`"),
            (_, Some(b)) => format!("`Binary::{b:?}`"),
            _ => "—".to_string(),
        };
        out.push_str(&format!("| `{}` — {} | {} | {} | {} | {} | `{}` |\n",
            row.name, row.doc, row.lane.title(), spellings.join(", "), code(&rules), fused, row.cuda_kernel));
    }
    out
}

/// Rules and codes are identified by their id.
impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.id == other.id
    }
}

impl PartialEq for Code {
    fn eq(&self, other: &Code) -> bool {
        self.code == other.code
    }
}
