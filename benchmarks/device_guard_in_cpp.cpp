// npy's device guard answered in C++: what PyTorch's Python device guard would cost
// with the change gallery/08_limitations.py proposes for torch/csrc/acc/Module.cpp.
//
// PyTorch's PythonDeviceGuard asks Python for type() (the guard's ``type_``) on
// every call, and every other member calls type(). This guard answers each member
// exactly as PythonDeviceGuard does (one device, index 0; the default stream; no
// events), with type() answered in C++. benchmarks/run.py loads it before
// ``import backend_pkg`` in a process of its own: its static initializer takes
// PrivateUse1's guard slot, so register_python_privateuseone_device_guard finds
// the slot taken and leaves npy's Python guard unregistered.

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/extension.h>

namespace {

struct GuardInCpp final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return c10::DeviceType::PrivateUse1;
  }
  c10::Device exchangeDevice(c10::Device) const override {
    return getDevice();
  }
  c10::Device getDevice() const override {
    return c10::Device(type(), 0);
  }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const noexcept override {
    return defaultStream();
  }
  c10::Stream getNewStream(c10::Device, int) const override {
    return defaultStream();
  }
  c10::Stream exchangeStream(c10::Stream) const noexcept override {
    return defaultStream();
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return 1;
  }
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override {
    return true;
  }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override {
    return true;
  }
  void synchronizeStream(const c10::Stream&) const override {}

 private:
  c10::Stream defaultStream() const noexcept {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(type(), 0));
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardInCpp);

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {}
