//! What an annotation promises about a tensor argument: dtype, device and rank.

/// Element type of a tensor annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DtypeSpec {
    F32,
    I64,
    I32,
    Bool,
}

impl DtypeSpec {
    /// The tch kind with this element type.
    pub fn kind(self) -> tch::Kind {
        match self {
            DtypeSpec::F32 => tch::Kind::Float,
            DtypeSpec::I64 => tch::Kind::Int64,
            DtypeSpec::I32 => tch::Kind::Int,
            DtypeSpec::Bool => tch::Kind::Bool,
        }
    }

    /// PyTorch's name (`str(torch.float32)` without `torch.`), as messages show it.
    pub fn name(self) -> &'static str {
        match self {
            DtypeSpec::F32 => "float32",
            DtypeSpec::I64 => "int64",
            DtypeSpec::I32 => "int32",
            DtypeSpec::Bool => "bool",
        }
    }
}

/// Device of a tensor annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    Cpu,
    Cuda(usize),
}

impl DeviceSpec {
    /// The tch device.
    pub fn device(self) -> tch::Device {
        match self {
            DeviceSpec::Cpu => tch::Device::Cpu,
            DeviceSpec::Cuda(index) => tch::Device::Cuda(index),
        }
    }

    /// How messages name the device: `cpu`, `cuda:0`.
    pub fn name(self) -> String {
        match self {
            DeviceSpec::Cpu => "cpu".to_string(),
            DeviceSpec::Cuda(index) => format!("cuda:{index}"),
        }
    }
}

/// The contract of one tensor annotation (`TensorF32Cpu2D` …), checked at the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorSpec {
    pub dtype: DtypeSpec,
    pub device: DeviceSpec,
    pub rank: usize,
}

impl TensorSpec {
    /// `TensorF32Cpu0D` (a float32 scalar tensor, `torch.tensor(0.5)`)
    pub const F32_CPU_0D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 0 };
    /// `TensorF32Cpu1D`
    pub const F32_CPU_1D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 1 };
    /// `TensorF32Cpu2D`
    pub const F32_CPU_2D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 2 };
    /// `TensorF32Cpu3D`
    pub const F32_CPU_3D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 3 };
    /// `TensorF32Cpu4D`
    pub const F32_CPU_4D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 4 };
    /// `TensorF32Cpu5D`
    pub const F32_CPU_5D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 5 };
    /// `TensorF32Cpu6D`
    pub const F32_CPU_6D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 6 };
    /// `TensorF32Cuda0_1D`
    pub const F32_CUDA0_1D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cuda(0), rank: 1 };
    /// `TensorF32Cuda0_2D`
    pub const F32_CUDA0_2D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cuda(0), rank: 2 };
    /// `TensorF32Cuda0_3D`
    pub const F32_CUDA0_3D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cuda(0), rank: 3 };
    /// `TensorF32Cuda0_4D`
    pub const F32_CUDA0_4D: TensorSpec = TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cuda(0), rank: 4 };
    /// `TensorI64Cpu0D` (an int64 scalar tensor, `lengths.max()`)
    pub const I64_CPU_0D: TensorSpec = TensorSpec { dtype: DtypeSpec::I64, device: DeviceSpec::Cpu, rank: 0 };
    /// `TensorI64Cpu1D`
    pub const I64_CPU_1D: TensorSpec = TensorSpec { dtype: DtypeSpec::I64, device: DeviceSpec::Cpu, rank: 1 };
    /// `TensorI64Cpu2D`
    pub const I64_CPU_2D: TensorSpec = TensorSpec { dtype: DtypeSpec::I64, device: DeviceSpec::Cpu, rank: 2 };
    /// `TensorI64Cpu3D`
    pub const I64_CPU_3D: TensorSpec = TensorSpec { dtype: DtypeSpec::I64, device: DeviceSpec::Cpu, rank: 3 };
    /// `TensorI64Cpu4D`
    pub const I64_CPU_4D: TensorSpec = TensorSpec { dtype: DtypeSpec::I64, device: DeviceSpec::Cpu, rank: 4 };
    /// `TensorI32Cpu1D`
    pub const I32_CPU_1D: TensorSpec = TensorSpec { dtype: DtypeSpec::I32, device: DeviceSpec::Cpu, rank: 1 };
    /// `TensorI32Cpu2D`
    pub const I32_CPU_2D: TensorSpec = TensorSpec { dtype: DtypeSpec::I32, device: DeviceSpec::Cpu, rank: 2 };
    /// `TensorI32Cpu3D`
    pub const I32_CPU_3D: TensorSpec = TensorSpec { dtype: DtypeSpec::I32, device: DeviceSpec::Cpu, rank: 3 };
    /// `TensorI32Cpu4D`
    pub const I32_CPU_4D: TensorSpec = TensorSpec { dtype: DtypeSpec::I32, device: DeviceSpec::Cpu, rank: 4 };
    /// `TensorBoolCpu0D` (a bool scalar tensor, `mask.all()`)
    pub const BOOL_CPU_0D: TensorSpec = TensorSpec { dtype: DtypeSpec::Bool, device: DeviceSpec::Cpu, rank: 0 };
    /// `TensorBoolCpu1D`
    pub const BOOL_CPU_1D: TensorSpec = TensorSpec { dtype: DtypeSpec::Bool, device: DeviceSpec::Cpu, rank: 1 };
    /// `TensorBoolCpu2D`
    pub const BOOL_CPU_2D: TensorSpec = TensorSpec { dtype: DtypeSpec::Bool, device: DeviceSpec::Cpu, rank: 2 };
    /// `TensorBoolCpu3D`
    pub const BOOL_CPU_3D: TensorSpec = TensorSpec { dtype: DtypeSpec::Bool, device: DeviceSpec::Cpu, rank: 3 };
    /// `TensorBoolCpu4D`
    pub const BOOL_CPU_4D: TensorSpec = TensorSpec { dtype: DtypeSpec::Bool, device: DeviceSpec::Cpu, rank: 4 };
}
