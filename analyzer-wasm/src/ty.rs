//! The static types the analyzer tracks for Python values.

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dtype {
    F32,
    I64,
}

/// Device of a tensor: the CPU or CUDA device 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Device {
    Cpu,
    Cuda0,
}

/// A tensor type; only the five combinations with a marker exist (see [`TensorTy::marker`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TensorTy {
    pub dtype: Dtype,
    pub device: Device,
    pub rank: u8,
}

impl TensorTy {
    pub const F32_CPU_1D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 1 };
    pub const F32_CPU_2D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 2 };
    pub const I64_CPU_1D: TensorTy = TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 1 };
    pub const F32_CUDA0_1D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 1 };
    pub const F32_CUDA0_2D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 2 };

    /// float32 on `device` with `rank`, if that type exists.
    pub fn f32(device: Device, rank: u8) -> Option<TensorTy> {
        let t = TensorTy { dtype: Dtype::F32, device, rank };
        t.marker().map(|_| t)
    }

    /// The annotation marker naming this type, if there is one.
    pub fn marker(self) -> Option<&'static str> {
        Some(match (self.dtype, self.device, self.rank) {
            (Dtype::F32, Device::Cpu, 1) => "TensorF32Cpu1D",
            (Dtype::F32, Device::Cpu, 2) => "TensorF32Cpu2D",
            (Dtype::I64, Device::Cpu, 1) => "TensorI64Cpu1D",
            (Dtype::F32, Device::Cuda0, 1) => "TensorF32Cuda0_1D",
            (Dtype::F32, Device::Cuda0, 2) => "TensorF32Cuda0_2D",
            _ => return None,
        })
    }

    pub fn from_marker(name: &str) -> Option<TensorTy> {
        Some(match name {
            "TensorF32Cpu1D" => Self::F32_CPU_1D,
            "TensorF32Cpu2D" => Self::F32_CPU_2D,
            "TensorI64Cpu1D" => Self::I64_CPU_1D,
            "TensorF32Cuda0_1D" => Self::F32_CUDA0_1D,
            "TensorF32Cuda0_2D" => Self::F32_CUDA0_2D,
            _ => return None,
        })
    }

    /// The `tl::TensorSpec` constant for boundary checks.
    pub fn spec_const(self) -> &'static str {
        match (self.dtype, self.device, self.rank) {
            (Dtype::F32, Device::Cpu, 1) => "F32_CPU_1D",
            (Dtype::F32, Device::Cpu, _) => "F32_CPU_2D",
            (Dtype::I64, _, _) => "I64_CPU_1D",
            (Dtype::F32, Device::Cuda0, 1) => "F32_CUDA0_1D",
            (Dtype::F32, Device::Cuda0, _) => "F32_CUDA0_2D",
        }
    }

    pub fn is_f32(self) -> bool {
        self.dtype == Dtype::F32
    }
}

/// Type of a Python value as far as the analyzer knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    Tensor(TensorTy),
    Int,
    Bool,
    /// float literal or other float value (never lowered)
    Float,
    /// str / bytes literal (never lowered; used for option literals)
    Str,
    /// the `None` literal (only meaningful as an option value)
    NoneVal,
    /// anything else: unresolved
    Unknown,
}

impl Ty {
    pub fn tensor(self) -> Option<TensorTy> {
        match self {
            Ty::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// Marker name for the report (`TensorF32Cpu2D`, `int`, `bool`), if any.
    pub fn marker(self) -> Option<&'static str> {
        match self {
            Ty::Tensor(t) => t.marker(),
            Ty::Int => Some("int"),
            Ty::Bool => Some("bool"),
            _ => None,
        }
    }

    /// Python int or bool (bool is an int subclass).
    pub fn is_scalar_int(self) -> bool {
        matches!(self, Ty::Int | Ty::Bool)
    }

    /// Human description for messages.
    pub fn describe(self) -> String {
        match self {
            Ty::Tensor(t) => t.marker().unwrap_or("tensor").to_string(),
            Ty::Int => "int".into(),
            Ty::Bool => "bool".into(),
            Ty::Float => "float".into(),
            Ty::Str => "str".into(),
            Ty::NoneVal => "None".into(),
            Ty::Unknown => "an unresolved type".into(),
        }
    }

    /// Join at a control-flow merge: the same type or unknown.
    pub fn join(self, other: Ty) -> Ty {
        if self == other {
            self
        } else {
            Ty::Unknown
        }
    }
}
