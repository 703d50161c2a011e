// The C++ twin of minimal/python_backend.py: the same device pieces and kernels,
// registered from C++. Its memory is host memory from PyTorch's CPU allocator; each
// kernel runs PyTorch's CPU kernel on CPU views of that memory, and every other op
// goes through PyTorch's boxed CPU fallback.
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <chrono>
#include <torch/extension.h>

namespace {

constexpr c10::DeviceType kTwin = c10::DeviceType::PrivateUse1;

constexpr c10::DeviceIndex kDeviceCount = 2;
thread_local c10::DeviceIndex current_device = 0;  // what the guard sets and restores

// Memory: host bytes, labelled as the current twin device's.
struct TwinAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* data = c10::alloc_cpu(nbytes);
    return {data, data, &c10::free_cpu, c10::Device(kTwin, current_device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &c10::free_cpu; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};
TwinAllocator allocator;

// Two devices over the same host memory, one stream each. Work is synchronous: a kernel has
// finished when it returns, so an event completes when recorded and holds the host's clock.
using Clock = std::chrono::steady_clock;
struct TwinGuard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kTwin; }
  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device previous = getDevice();
    setDevice(device);
    return previous;
  }
  c10::Device getDevice() const override { return {kTwin, current_device}; }
  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.index() >= 0 && device.index() < kDeviceCount, "twin: no device ", device);
    current_device = device.index();
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override { current_device = device.index(); }
  c10::Stream getStream(c10::Device device) const override { return c10::Stream(c10::Stream::DEFAULT, device); }
  c10::Stream exchangeStream(c10::Stream stream) const override { return stream; }
  c10::DeviceIndex deviceCount() const noexcept override { return kDeviceCount; }
  void record(void** event, const c10::Stream&, c10::DeviceIndex, c10::EventFlag) const override {
    if (*event == nullptr) *event = new Clock::time_point();
    *static_cast<Clock::time_point*>(*event) = Clock::now();
  }
  void destroyEvent(void* event, c10::DeviceIndex) const noexcept override {
    delete static_cast<Clock::time_point*>(event);
  }
  double elapsedTime(void* start, void* end, c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "twin: both events must be recorded before elapsed_time()");
    auto interval = *static_cast<Clock::time_point*>(end) - *static_cast<Clock::time_point*>(start);
    return std::chrono::duration<double, std::milli>(interval).count();
  }
  bool queryEvent(void*) const override { return true; }
  void block(void*, const c10::Stream&) const override {}
  void synchronizeEvent(void*) const override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeDevice(c10::DeviceIndex) const override {}
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, TwinGuard);

// What the runtime asks of the device; autograd asks hasPrimaryContext before backward.
struct TwinHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override { return index >= 0 && index < kDeviceCount; }
};

// A CPU tensor over the same memory (a CPU tensor stays itself).
at::Tensor host(const at::Tensor& tensor) {
  if (tensor.device().type() == c10::DeviceType::CPU) return tensor;
  return at::from_blob(tensor.data_ptr(), tensor.sizes(), tensor.strides(),
                       tensor.options().device(c10::DeviceType::CPU));
}

// Allocation on the device asked for (twin:1), else on the current one.
at::Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                 std::optional<at::Device> device, std::optional<bool>, std::optional<at::MemoryFormat> format) {
  c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_generic(size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device> device, std::optional<bool>) {
  c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_strided_generic(size, stride, &allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

at::Tensor copy_from(const at::Tensor& source, const at::Tensor& destination, bool) {
  host(destination).copy_(host(source));  // PyTorch's CPU copy: its casts, into new memory
  return destination;
}

// The CPU fallback's way back for out= results: resize the destination, then copy.
at::Tensor copy_from_and_resize(const at::Tensor& source, const at::Tensor& destination) {
  at::native::resize_(destination, source.sizes());
  return copy_from(source, destination, false);
}

at::Tensor& add_out(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::add_out(cpu_out, host(a), host(b), alpha);
  return out;
}
at::Tensor& sub_out(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::sub_out(cpu_out, host(a), host(b), alpha);
  return out;
}
at::Tensor& mul_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::mul_out(cpu_out, host(a), host(b));
  return out;
}
at::Tensor& div_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::div_out(cpu_out, host(a), host(b));
  return out;
}
at::Tensor& pow_out(const at::Tensor& a, const at::Scalar& exponent, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::pow_out(cpu_out, host(a), exponent);
  return out;
}
at::Tensor& mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::mm_out(cpu_out, host(a), host(b));
  return out;
}
at::Tensor& addmm_out(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::addmm_out(cpu_out, host(bias), host(a), host(b), beta, alpha);
  return out;
}
at::Tensor& sum_out(const at::Tensor& a, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::sum_out(cpu_out, host(a), dim, keepdim, dtype);
  return out;
}
at::Tensor& mean_out(const at::Tensor& a, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  at::Tensor cpu_out = host(out);
  at::mean_out(cpu_out, host(a), dim, keepdim, dtype);
  return out;
}
at::Tensor relu(const at::Tensor& a) {
  at::Tensor out = at::empty_like(a);
  at::Tensor cpu_out = host(out);
  at::clamp_min_out(cpu_out, host(a), 0);
  return out;
}
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& a, const at::Scalar& threshold) {
  at::Tensor out = at::empty_like(grad);
  at::Tensor cpu_out = host(out);
  at::threshold_backward_out(cpu_out, host(grad), host(a), threshold);
  return out;
}
at::Tensor& fill_(at::Tensor& self, const at::Scalar& value) {
  host(self).fill_(value);
  return self;
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { at::native::cpu_fallback(op, stack); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty);
  m.impl("empty_strided", empty_strided);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("resize_", at::native::resize_);  // the CPU kernel: the storage grows with its own allocator
  // Views share their base's storage: PyTorch's own metadata-only kernels.
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("add.out", add_out);
  m.impl("sub.out", sub_out);
  m.impl("mul.out", mul_out);
  m.impl("div.out", div_out);
  m.impl("pow.Tensor_Scalar_out", pow_out);
  m.impl("mm.out", mm_out);
  m.impl("addmm.out", addmm_out);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.out", mean_out);
  m.impl("relu", relu);
  m.impl("threshold_backward", threshold_backward);
  m.impl("fill_.Scalar", fill_);
}

// Module.to keeps a parameter object only when its tensor may take the moved one's (param.data = moved);
// c10 answers for CPU and CUDA and asks a PrivateUse1 backend. The twin's tensors are plain TensorImpls
// over host memory, as CPU's are, so the answer is CUDA's: yes, when both are dense.
bool shallow_copy_compatible(const at::Tensor& self, const at::Tensor& other) {
  auto dense = [](const at::Tensor& tensor) {
    return tensor.layout() == c10::kStrided && !tensor.is_quantized() &&
           (tensor.device().is_cpu() || tensor.device().type() == kTwin);
  };
  return dense(self) && dense(other);
}

// The op is composite: a call with a twin tensor arrives at the twin's autograd key.
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", shallow_copy_compatible);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Runs when the library loads: the name, the allocator and the hooks.
static const bool registered = [] {
  c10::register_privateuse1_backend("twin");
  c10::SetAllocator(kTwin, &allocator);
  at::RegisterPrivateUse1HooksInterface(new TwinHooks());
  return true;
}();

// What the device module (minimal/cpp_backend.py) reports.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {
  module.def("device_count", [] { return kDeviceCount; });
  module.def("current_device", [] { return current_device; });
}
