// The few libtorch calls of the call boundary that tch's C API makes costly: one C call each,
// no heap handle copied, no thread-local error slot to read afterwards. Compiled by build.rs
// against the libtorch and Python headers of the build; every function is `noexcept` and turns
// a C++ exception into a return value the Rust side checks.
// The Python part (the wrap) is compiled with the crate's `python` feature only.
#ifdef TORCHLOWER_PYTHON
#include <torch/csrc/autograd/python_variable.h>
#else
#include <ATen/ATen.h>
#endif
#include <ATen/autocast_mode.h>
#include <ATen/Parallel.h>

extern "C" {

// What the boundary checks of a tensor argument: device, dtype, rank, the first two sizes
// (the rank-1 and rank-2 fast paths read them), and requires_grad.
struct tl_tensor_facts {
  int32_t device_type;   // c10::DeviceType
  int32_t device_index;  // -1 when none
  int32_t scalar_type;   // c10::ScalarType
  int32_t requires_grad;
  int64_t rank;
  int64_t sizes[2];      // 1 where the rank has no such dimension
};

// Fills `out` from a defined tensor; 0 on success, -1 if libtorch threw (undefined tensor).
int tl_tensor_facts_of(const at::Tensor* tensor, tl_tensor_facts* out) noexcept {
  try {
    const at::Tensor& t = *tensor;
    out->device_type = static_cast<int32_t>(t.device().type());
    out->device_index = t.device().index();
    out->scalar_type = static_cast<int32_t>(t.scalar_type());
    out->requires_grad = t.requires_grad() ? 1 : 0;
    out->rank = t.dim();
    out->sizes[0] = 1;
    out->sizes[1] = 1;
    if (out->rank <= 2) {
      for (int64_t d = 0; d < out->rank; ++d) out->sizes[d] = t.sizes()[d];
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

// What the merged elementwise plan reads of each operand of rank <= 4: device, dtype, rank,
// sizes, whether it is contiguous, and its data pointer.
struct tl_dense_layout {
  int32_t device_type;
  int32_t scalar_type;
  int32_t rank;
  int32_t contiguous;
  int64_t sizes[4];
  void* data;
};

// Fills `out`; 0 on success, -1 if libtorch threw or the rank is above 4.
int tl_dense_layout_of(const at::Tensor* tensor, tl_dense_layout* out) noexcept {
  try {
    const at::Tensor& t = *tensor;
    const int64_t rank = t.dim();
    if (rank > 4) return -1;
    out->device_type = static_cast<int32_t>(t.device().type());
    out->scalar_type = static_cast<int32_t>(t.scalar_type());
    out->rank = static_cast<int32_t>(rank);
    out->contiguous = t.is_contiguous() ? 1 : 0;
    for (int64_t d = 0; d < rank; ++d) out->sizes[d] = t.sizes()[d];
    out->data = t.data_ptr();
    return 0;
  } catch (...) {
    return -1;
  }
}

#ifdef TORCHLOWER_PYTHON
// The Python object of tch's tensor handle `tensor`, consuming the handle: its `at::Tensor`
// is moved into THPVariable_Wrap (no reference count traffic) and the handle freed. NULL with a
// Python exception set if libtorch threw.
PyObject* tl_wrap_owned(at::Tensor* tensor) noexcept {
  PyObject* object = nullptr;
  try {
    object = THPVariable_Wrap(std::move(*tensor));
  } catch (const std::exception& error) {
    PyErr_Format(PyExc_RuntimeError, "torchlower: %s", error.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "torchlower: a C++ exception while wrapping a tensor");
  }
  delete tensor;
  return object;
}
#endif  // TORCHLOWER_PYTHON

// Python's `a is b` for two tensors: PyTorch keeps one Python object per TensorImpl.
int tl_same_tensor(const at::Tensor* a, const at::Tensor* b) noexcept {
  return a->is_same(*b) ? 1 : 0;
}

// Whether an autocast region is on for the CPU or CUDA, the devices native code runs on (a read
// of the thread's dispatch-key set).
int tl_autocast_enabled() noexcept {
  try {
    return at::autocast::is_autocast_enabled(at::kCPU) || at::autocast::is_autocast_enabled(at::kCUDA);
  } catch (...) {
    return 0;
  }
}

// A range of work items that the Rust side runs; it never unwinds (it catches its panics).
typedef void (*tl_range_body)(void* context, int64_t begin, int64_t end);

// `at::parallel_for(begin, end, grain, …)`: libtorch's own split of a range over its intra-op
// threads (the same pool, the same `torch.set_num_threads`, nested calls run inline), each part
// handed to `body`. Built with OpenMP when libtorch's parallel backend is OpenMP (build.rs), else
// the whole range runs on this thread. 0 on success, -1 if libtorch threw.
int tl_parallel_for(int64_t begin, int64_t end, int64_t grain, tl_range_body body, void* context) noexcept {
  try {
    at::parallel_for(begin, end, grain, [&](int64_t part_begin, int64_t part_end) { body(context, part_begin, part_end); });
    return 0;
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
