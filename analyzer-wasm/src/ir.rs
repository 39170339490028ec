//! The typed expression IR between claim and lower: a tree of claimed tensor ops and Python
//! scalar expressions, plus the statements around them. A function has an IR only when every
//! part of it is lowerable. A later fusion pass (matmul/linear + elementwise epilogue +
//! reduction) rewrites `Expr::Tensor` subtrees here; lowering just prints the tree.

use crate::types::ty::{Device, Ty};

/// One claimed tensor op (backend `tl::ops` / `tl::cuda::ops` function).
#[derive(Debug, Clone, PartialEq)]
pub enum TensorOp {
    /// `linear(x, w, b)`; `bias` tells whether a third operand is present
    Linear { bias: bool },
    Relu,
    Sigmoid,
    Tanh,
    Abs,
    Neg,
    Square,
    Exp,
    Log,
    Sqrt,
    Gelu,
    Add,
    Sub,
    Mul,
    Div,
    Matmul,
    SumDim { dim: i64, keepdim: bool },
    MeanDim { dim: i64, keepdim: bool },
    Softmax { dim: i64 },
    Argmax { dim: i64, keepdim: bool },
}

impl TensorOp {
    /// Name of the backend function (same under `tl::ops` and `tl::cuda::ops`).
    pub fn backend_name(&self) -> &'static str {
        match self {
            TensorOp::Linear { .. } => "linear",
            TensorOp::Relu => "relu",
            TensorOp::Sigmoid => "sigmoid",
            TensorOp::Tanh => "tanh",
            TensorOp::Abs => "abs",
            TensorOp::Neg => "neg",
            TensorOp::Square => "square",
            TensorOp::Exp => "exp",
            TensorOp::Log => "log",
            TensorOp::Sqrt => "sqrt",
            TensorOp::Gelu => "gelu",
            TensorOp::Add => "add",
            TensorOp::Sub => "sub",
            TensorOp::Mul => "mul",
            TensorOp::Div => "div",
            TensorOp::Matmul => "matmul",
            TensorOp::SumDim { .. } => "sum_dim",
            TensorOp::MeanDim { .. } => "mean_dim",
            TensorOp::Softmax { .. } => "softmax",
            TensorOp::Argmax { .. } => "argmax",
        }
    }
}

/// Checked Python int arithmetic (`tl::scalar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
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
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// a local variable (Python name) of a lowerable type
    Local { name: String, ty: Ty },
    Int(i64),
    Bool(bool),
    /// claimed op; `site` indexes the function's sites (for the site ↔ Rust link)
    Tensor { site: usize, op: TensorOp, device: Device, args: Vec<Expr> },
    /// int arithmetic on two int-valued operands
    Scalar { op: ScalarOp, left: Box<Expr>, right: Box<Expr> },
    /// -x on an int
    Neg(Box<Expr>),
    /// bool → int (`True + 1`)
    BoolToInt(Box<Expr>),
    /// int truthiness (`if n:` / `not n`)
    IntTruthy(Box<Expr>),
    Not(Box<Expr>),
    /// comparison chain; operands are all ints or all bools (`kind`)
    Compare { kind: ScalarKind, first: Box<Expr>, rest: Vec<(CmpOp, Expr)> },
    /// `and` / `or` over bools
    BoolOp { and: bool, values: Vec<Expr> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Assign { name: String, ty: Ty, value: Expr },
    If { cond: Expr, then: Vec<Stmt>, orelse: Vec<Stmt> },
    For { var: String, start: Expr, stop: Expr, step: Expr, body: Vec<Stmt> },
    While { cond: Expr, body: Vec<Stmt> },
    Return(Expr),
}

/// A native function ready for lowering.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub params: Vec<(String, Ty)>,
    pub returns: Ty,
    pub body: Vec<Stmt>,
}
