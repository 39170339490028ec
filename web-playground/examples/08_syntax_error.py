# A module that does not parse: the analyzer reports a module diagnostic.
from torchlower.types import TensorF32Cpu2D


def broken(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu(
