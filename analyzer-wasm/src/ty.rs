//! The static types the analyzer tracks for Python values.

/// Element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dtype {
    F32,
    I64,
    /// int32 (GPT-2's `torch.arange(…, dtype=torch.int32)` positions, torchvision's `t.int()`)
    I32,
    Bool,
}

impl Dtype {
    /// int64 or int32: the integer dtypes, which share the int rules (eager's promotion).
    pub fn is_integer(self) -> bool {
        matches!(self, Dtype::I64 | Dtype::I32)
    }

    /// The dtype of a binary op's result on two tensors of these dtypes, as eager promotes
    /// them for `+ - *`: float32 over any integer, int64 over int32, either over bool.
    pub fn promote(self, other: Dtype) -> Dtype {
        let rank = |d: Dtype| match d {
            Dtype::Bool => 0,
            Dtype::I32 => 1,
            Dtype::I64 => 2,
            Dtype::F32 => 3,
        };
        if rank(self) >= rank(other) { self } else { other }
    }
}

/// Device of a tensor: the CPU or CUDA device 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Device {
    Cpu,
    Cuda0,
}

/// A tensor type; only the combinations with a marker exist (see [`MARKERS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TensorTy {
    pub dtype: Dtype,
    pub device: Device,
    pub rank: u8,
}

/// Every tensor type there is: (type, annotation marker, the backend's `TensorSpec` constant).
/// float32 on the CPU (ranks 0–6: GPT-2's `torch.full([], value.size(-1) ** 0.5)` divisor,
/// grouped-query attention's `(b, h, n_rep, t, d)`, Swin's and YOLOv5's window and space-to-depth
/// views `(b, h/s, s, w/s, s, c)`) and on CUDA device 0 (ranks 1–4), int64 and bool on the CPU
/// (ranks 0–4: `lengths.max()`, `mask.sum()`, `q.argmax()`) and int32 on the CPU (ranks 1–4).
const MARKERS: &[(TensorTy, &str, &str)] = &[
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 0 }, "TensorF32Cpu0D", "F32_CPU_0D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 1 }, "TensorF32Cpu1D", "F32_CPU_1D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 2 }, "TensorF32Cpu2D", "F32_CPU_2D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 3 }, "TensorF32Cpu3D", "F32_CPU_3D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 4 }, "TensorF32Cpu4D", "F32_CPU_4D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 5 }, "TensorF32Cpu5D", "F32_CPU_5D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 6 }, "TensorF32Cpu6D", "F32_CPU_6D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 1 }, "TensorF32Cuda0_1D", "F32_CUDA0_1D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 2 }, "TensorF32Cuda0_2D", "F32_CUDA0_2D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 3 }, "TensorF32Cuda0_3D", "F32_CUDA0_3D"),
    (TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 4 }, "TensorF32Cuda0_4D", "F32_CUDA0_4D"),
    (TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 0 }, "TensorI64Cpu0D", "I64_CPU_0D"),
    (TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 1 }, "TensorI64Cpu1D", "I64_CPU_1D"),
    (TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 2 }, "TensorI64Cpu2D", "I64_CPU_2D"),
    (TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 3 }, "TensorI64Cpu3D", "I64_CPU_3D"),
    (TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 4 }, "TensorI64Cpu4D", "I64_CPU_4D"),
    (TensorTy { dtype: Dtype::I32, device: Device::Cpu, rank: 1 }, "TensorI32Cpu1D", "I32_CPU_1D"),
    (TensorTy { dtype: Dtype::I32, device: Device::Cpu, rank: 2 }, "TensorI32Cpu2D", "I32_CPU_2D"),
    (TensorTy { dtype: Dtype::I32, device: Device::Cpu, rank: 3 }, "TensorI32Cpu3D", "I32_CPU_3D"),
    (TensorTy { dtype: Dtype::I32, device: Device::Cpu, rank: 4 }, "TensorI32Cpu4D", "I32_CPU_4D"),
    (TensorTy { dtype: Dtype::Bool, device: Device::Cpu, rank: 0 }, "TensorBoolCpu0D", "BOOL_CPU_0D"),
    (TensorTy { dtype: Dtype::Bool, device: Device::Cpu, rank: 1 }, "TensorBoolCpu1D", "BOOL_CPU_1D"),
    (TensorTy { dtype: Dtype::Bool, device: Device::Cpu, rank: 2 }, "TensorBoolCpu2D", "BOOL_CPU_2D"),
    (TensorTy { dtype: Dtype::Bool, device: Device::Cpu, rank: 3 }, "TensorBoolCpu3D", "BOOL_CPU_3D"),
    (TensorTy { dtype: Dtype::Bool, device: Device::Cpu, rank: 4 }, "TensorBoolCpu4D", "BOOL_CPU_4D"),
];

impl TensorTy {
    pub const F32_CPU_1D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 1 };
    pub const F32_CPU_2D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 2 };
    pub const F32_CPU_3D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 3 };
    pub const F32_CPU_4D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cpu, rank: 4 };
    pub const I64_CPU_1D: TensorTy = TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 1 };
    pub const I64_CPU_2D: TensorTy = TensorTy { dtype: Dtype::I64, device: Device::Cpu, rank: 2 };
    pub const BOOL_CPU_2D: TensorTy = TensorTy { dtype: Dtype::Bool, device: Device::Cpu, rank: 2 };
    pub const F32_CUDA0_1D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 1 };
    pub const F32_CUDA0_2D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 2 };
    pub const F32_CUDA0_3D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 3 };
    pub const F32_CUDA0_4D: TensorTy = TensorTy { dtype: Dtype::F32, device: Device::Cuda0, rank: 4 };

    /// `dtype` on `device` with `rank`, if that type exists.
    pub fn new(dtype: Dtype, device: Device, rank: u8) -> Option<TensorTy> {
        let t = TensorTy { dtype, device, rank };
        t.marker().map(|_| t)
    }

    /// float32 on `device` with `rank`, if that type exists.
    pub fn f32(device: Device, rank: u8) -> Option<TensorTy> {
        Self::new(Dtype::F32, device, rank)
    }

    fn row(self) -> Option<&'static (TensorTy, &'static str, &'static str)> {
        MARKERS.iter().find(|(t, _, _)| *t == self)
    }

    /// The annotation marker naming this type, if there is one.
    pub fn marker(self) -> Option<&'static str> {
        self.row().map(|(_, marker, _)| *marker)
    }

    pub fn from_marker(name: &str) -> Option<TensorTy> {
        MARKERS.iter().find(|(_, marker, _)| *marker == name).map(|(t, _, _)| *t)
    }

    /// Every marker name, in table order (for docs and tests).
    pub fn all_markers() -> impl Iterator<Item = &'static str> {
        MARKERS.iter().map(|(_, marker, _)| *marker)
    }

    /// The `tl::TensorSpec` constant for boundary checks.
    pub fn spec_const(self) -> &'static str {
        self.row().map(|(_, _, spec)| *spec).unwrap_or("F32_CPU_2D")
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
    /// Python float (lowered as `f64`)
    Float,
    /// str / bytes literal (never lowered; used for option literals)
    Str,
    /// the `None` literal (only meaningful as an option value)
    NoneVal,
    /// a tuple of this many values; the walk keeps the elements (a tuple local `s` lives as
    /// the locals `s#0`, `s#1`, …, so element types flow like any local's)
    Tuple(u8),
    /// a list of this many values: lives as its elements like a tuple, but stays a list where
    /// Python tells them apart (`==` with a tuple, `+`, a returned value, `.copy()`, item
    /// assignment, `.append()`)
    List(u8),
    /// a `torch.distributions` object (`d = Categorical(logits=x)`): like a tuple, it lives as
    /// the locals of the tensors it stores (`d#0`, `d#1`), and its methods are ops on them
    Distribution(Distribution),
    /// anything else: unresolved
    Unknown,
}

/// The distributions whose methods are claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distribution {
    /// stores its normalized logits
    Categorical,
    /// stores its broadcast loc and its scale
    Normal,
}

impl Distribution {
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Categorical => "Categorical",
            Distribution::Normal => "Normal",
        }
    }

    /// How many tensors it stores (its locals `d#0` …).
    pub fn tensors(self) -> u8 {
        match self {
            Distribution::Categorical => 1,
            Distribution::Normal => 2,
        }
    }
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
            Ty::Float => Some("float"),
            _ => None,
        }
    }

    /// The annotation that names this type, where one does: a marker, `int`, `bool`,
    /// `float`, or a parameter's list or tuple of ints (`list[int, int]`).
    pub fn annotation(self) -> Option<String> {
        match self {
            Ty::Tuple(n) | Ty::List(n) => Some(format!("{}[{}]", self.sequence_name(), vec!["int"; usize::from(n)].join(", "))),
            other => other.marker().map(str::to_string),
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
            Ty::Tuple(n) => format!("a tuple of {n}"),
            Ty::List(n) => format!("a list of {n}"),
            Ty::Distribution(d) => format!("a {} distribution", d.name()),
            Ty::Unknown => "an unresolved type".into(),
        }
    }

    /// How many elements a tuple or list has.
    pub fn items(self) -> Option<u8> {
        match self {
            Ty::Tuple(n) | Ty::List(n) => Some(n),
            _ => None,
        }
    }

    /// A tuple or list of `n` like this one (a slice of it, one grown by `.append()`).
    pub fn with_items(self, n: u8) -> Ty {
        match self {
            Ty::List(_) => Ty::List(n),
            _ => Ty::Tuple(n),
        }
    }

    /// The kind of sequence, as Python names it in messages.
    pub fn sequence_name(self) -> &'static str {
        if matches!(self, Ty::List(_)) { "list" } else { "tuple" }
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
