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
#include <ATen/native/ConvUtils.h>

// libtorch's accessors of an `mkldnn` tensor's buffer (ATen/native/mkldnn/MKLDNNCommon.h, a
// header the wheels do not ship; the functions are exported)
namespace at::native {
TORCH_API void* data_ptr_from_mkldnn(const at::Tensor& mkldnn_tensor);
TORCH_API int64_t nbytes_from_mkldnn(const at::Tensor& mkldnn_tensor);
}  // namespace at::native

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

// 1 when eager's convolution of these arguments runs oneDNN (`ConvBackend::Mkldnn`) on
// contiguous (not channels-last) memory, 0 when it runs anything else, -1 if libtorch threw.
// Asked of libtorch's own backend choice, so the answer follows its heuristics (batch size,
// kernel size, thread count) exactly. `input` null: a contiguous float32 CPU input of
// `input_sizes` (rank 2 + `spatial`), as eager would have where native holds the value in
// oneDNN's layout; `bias` may be null; the three lists have `spatial` elements.
int tl_conv_runs_onednn(const at::Tensor* input, const int64_t* input_sizes, const at::Tensor* weight,
                        const at::Tensor* bias, const int64_t* stride, const int64_t* padding,
                        const int64_t* dilation, int64_t spatial, int64_t groups) noexcept {
  try {
    // the stand-in is never touched: its pages are never faulted in
    const at::Tensor stand_in = input ? at::Tensor() : at::empty(at::IntArrayRef(input_sizes, 2 + spatial), at::kFloat);
    const at::Tensor& x = input ? *input : stand_in;
    const std::optional<at::Tensor> bias_opt = bias ? std::optional<at::Tensor>(*bias) : std::nullopt;
    const std::vector<int64_t> no_output_padding(spatial, 0);
    const auto sym = [spatial](const int64_t* values) { return c10::fromIntArrayRefSlow(at::IntArrayRef(values, spatial)); };
    const at::native::ConvBackend backend = at::native::select_conv_backend(
        x, *weight, bias_opt, sym(stride), sym(padding), sym(dilation), false,
        c10::fromIntArrayRefSlow(at::IntArrayRef(no_output_padding)), c10::SymInt(groups),
        bias ? at::OptionalSymIntArrayRef(c10::fromIntArrayRefSlow(bias->sizes())) : at::OptionalSymIntArrayRef());
    if (backend != at::native::ConvBackend::Mkldnn) return 0;
    return at::native::_determine_backend_memory_format(x, *weight, backend) == at::MemoryFormat::Contiguous ? 1 : 0;
  } catch (...) {
    return -1;
  }
}

// The buffer of a tensor in oneDNN's layout (an `mkldnn` tensor): its data and its size in
// bytes, padding included. 0 on success, -1 if libtorch threw.
int tl_onednn_buffer(const at::Tensor* tensor, void** data, int64_t* nbytes) noexcept {
  try {
    *data = at::native::data_ptr_from_mkldnn(*tensor);
    *nbytes = at::native::nbytes_from_mkldnn(*tensor);
    return 0;
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
