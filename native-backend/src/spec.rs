//! What an annotation promises about a tensor argument: dtype, device and rank.

/// Element type of a tensor annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DtypeSpec {
    F32,
    I64,
}

impl DtypeSpec {
    /// The tch kind with this element type.
    pub fn kind(self) -> tch::Kind {
        match self {
            DtypeSpec::F32 => tch::Kind::Float,
            DtypeSpec::I64 => tch::Kind::Int64,
        }
    }

    /// PyTorch's name (`str(torch.float32)` without `torch.`), as messages show it.
    pub fn name(self) -> &'static str {
        match self {
            DtypeSpec::F32 => "float32",
            DtypeSpec::I64 => "int64",
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
    /// `TensorF32Cpu1D`
    pub const F32_CPU_1D: TensorSpec =
        TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 1 };
    /// `TensorF32Cpu2D`
    pub const F32_CPU_2D: TensorSpec =
        TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cpu, rank: 2 };
    /// `TensorI64Cpu1D`
    pub const I64_CPU_1D: TensorSpec =
        TensorSpec { dtype: DtypeSpec::I64, device: DeviceSpec::Cpu, rank: 1 };
    /// `TensorF32Cuda0_1D`
    pub const F32_CUDA0_1D: TensorSpec =
        TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cuda(0), rank: 1 };
    /// `TensorF32Cuda0_2D`
    pub const F32_CUDA0_2D: TensorSpec =
        TensorSpec { dtype: DtypeSpec::F32, device: DeviceSpec::Cuda(0), rank: 2 };
}
