// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
//
// resident_dlpack_probe: a Python module whose objects export fields and batches of a small
// HostSpace dataset through `resident::to_dlpack`, with `__dlpack__` and `__dlpack_device__`
// as the DLPack Python specification (the array API's data interchange) describes them, so
// that a real consumer (numpy.from_dlpack) can be tested against what the library exports.
//
//   dataset(rows, batch_size) -> Dataset with fields features float32 (rows, 3), values
//       3 * row + column + 0.5; labels int32 (rows,), 1000 + row; mask bool (rows,), row % 3 == 0
//   Dataset.field(f), Dataset.batch(k, f) -> an exporter of that view
//   used_bytes(): bytes the datasets' space holds; live_datasets(): Dataset objects alive
//   header_version(): the (major, minor) DLPack version of the header this module was built with
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "resident/dlpack.hpp"
#include "resident/resident.hpp"

#if !__has_include(<dlpack/dlpack.h>)
#error "resident_dlpack_probe needs a DLPack header"
#endif

namespace {

using Probe = resident::DeviceDataset<resident::HostSpace, float, std::int32_t, bool>;

const resident::HostSpace& space() {
  static const resident::HostSpace instance =
      resident::HostSpace::with_budget(std::size_t{1} << 24);
  return instance;
}
Py_ssize_t live = 0;  // Dataset objects alive (the GIL guards it)

// The capsule names are static, as the specification requires.
constexpr const char* unversioned_name = "dltensor";
#if RESIDENT_DLPACK_VERSIONED
constexpr const char* versioned_name = "dltensor_versioned";
#endif

// Capsule destructors: a consumer renames the capsule ("used_dltensor...") when it takes the
// tensor over; one that was never consumed still owns it and calls the deleter.
void destroy_unversioned(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, unversioned_name) == 0) return;
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, unversioned_name));
  if (tensor->deleter != nullptr) tensor->deleter(tensor);
}
#if RESIDENT_DLPACK_VERSIONED
void destroy_versioned(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, versioned_name) == 0) return;
  auto* tensor =
      static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, versioned_name));
  if (tensor->deleter != nullptr) tensor->deleter(tensor);
}

// A consumer that asks for no version (or one before 1.0) gets the legacy struct: a
// DLManagedTensor over the same DLTensor, owning the versioned tensor.
DLManagedTensor* legacy(DLManagedTensorVersioned* versioned) {
  auto* tensor = new DLManagedTensor{};
  tensor->dl_tensor = versioned->dl_tensor;
  tensor->manager_ctx = versioned;
  tensor->deleter = [](DLManagedTensor* self) {
    auto* inner = static_cast<DLManagedTensorVersioned*>(self->manager_ctx);
    inner->deleter(inner);
    delete self;
  };
  return tensor;
}
#endif

struct DatasetObject {
  PyObject ob_base;  // PyObject_HEAD
  Probe* dataset;
};

struct ExportObject {
  PyObject ob_base;  // PyObject_HEAD
  PyObject* owner;   // the DatasetObject
  int field;
  Py_ssize_t batch;  // -1: the whole field
};

PyTypeObject* dataset_type = nullptr;
PyTypeObject* export_type = nullptr;

template <std::size_t F>
resident::DLPackTensor* export_view(const Probe& dataset, Py_ssize_t batch) {
  if (batch < 0) return resident::to_dlpack(dataset, dataset.field<F>());
  return resident::to_dlpack(dataset, std::get<F>(dataset.batch(static_cast<std::size_t>(batch))));
}

resident::DLPackTensor* export_of(const ExportObject& self) {
  const Probe& dataset = *reinterpret_cast<DatasetObject*>(self.owner)->dataset;
  if (self.field == 0) return export_view<0>(dataset, self.batch);
  if (self.field == 1) return export_view<1>(dataset, self.batch);
  return export_view<2>(dataset, self.batch);
}

// Raises the Python exception for the C++ one in flight; returns null.
PyObject* raise_current() {
  try {
    throw;
  } catch (const std::out_of_range& error) {
    PyErr_SetString(PyExc_IndexError, error.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const resident::InvalidArgument& error) {
    PyErr_SetString(PyExc_ValueError, error.what());
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return nullptr;
}

// __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None)
PyObject* export_dlpack(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  PyObject* stream = Py_None;
  PyObject* max_version = Py_None;
  PyObject* dl_device = Py_None;
  PyObject* copy = Py_None;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", const_cast<char**>(keywords),
                                  &stream, &max_version, &dl_device, &copy) == 0)
    return nullptr;
  if (stream != Py_None) {
    PyErr_SetString(PyExc_BufferError,
                    "the export is in host memory (kDLCPU): stream must be None");
    return nullptr;
  }
  if (dl_device != Py_None) {
    int device_type = -1;
    int device_id = -1;
    if (PyArg_ParseTuple(dl_device, "ii:dl_device", &device_type, &device_id) == 0) return nullptr;
    if (device_type != kDLCPU || device_id != 0) {
      PyErr_SetString(PyExc_BufferError,
                      "the export is zero-copy on (kDLCPU, 0); it cannot move to another device");
      return nullptr;
    }
  }
  if (copy != Py_None && PyObject_IsTrue(copy) == 1) {
    PyErr_SetString(PyExc_BufferError, "the export is zero-copy; copy=True is not supported");
    return nullptr;
  }
  long major = 0;
  if (max_version != Py_None) {
    long minor = 0;
    if (PyArg_ParseTuple(max_version, "ll:max_version", &major, &minor) == 0) return nullptr;
  }
  resident::DLPackTensor* tensor = nullptr;
  try {
    tensor = export_of(*reinterpret_cast<ExportObject*>(self));
  } catch (...) {
    return raise_current();
  }
#if RESIDENT_DLPACK_VERSIONED
  if (major >= 1) {
    PyObject* capsule = PyCapsule_New(tensor, versioned_name, destroy_versioned);
    if (capsule == nullptr) tensor->deleter(tensor);
    return capsule;
  }
  DLManagedTensor* old = nullptr;
  try {
    old = legacy(tensor);
  } catch (...) {
    tensor->deleter(tensor);
    return raise_current();
  }
#else
  DLManagedTensor* old = tensor;  // this header predates 1.0: the legacy struct whatever asked
#endif
  PyObject* capsule = PyCapsule_New(old, unversioned_name, destroy_unversioned);
  if (capsule == nullptr) old->deleter(old);
  return capsule;
}

PyObject* export_dlpack_device(PyObject* /*self*/, PyObject* /*unused*/) {
  return Py_BuildValue("(ii)", static_cast<int>(kDLCPU), 0);
}

void export_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(reinterpret_cast<ExportObject*>(self)->owner);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* make_export(PyObject* owner, int field, Py_ssize_t batch) {
  if (field < 0 || field > 2) {
    PyErr_Format(PyExc_IndexError, "field %d: the dataset has fields 0, 1 and 2", field);
    return nullptr;
  }
  const Probe& dataset = *reinterpret_cast<DatasetObject*>(owner)->dataset;
  if (batch >= 0 && static_cast<std::size_t>(batch) >= dataset.num_batches()) {
    PyErr_Format(PyExc_IndexError, "batch %zd: the dataset has %zu batches", batch,
                 dataset.num_batches());
    return nullptr;
  }
  auto* self = reinterpret_cast<ExportObject*>(export_type->tp_alloc(export_type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(owner);
  self->owner = owner;
  self->field = field;
  self->batch = batch;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* dataset_field(PyObject* self, PyObject* args) {
  int field = 0;
  if (PyArg_ParseTuple(args, "i:field", &field) == 0) return nullptr;
  return make_export(self, field, -1);
}

PyObject* dataset_batch(PyObject* self, PyObject* args) {
  Py_ssize_t batch = 0;
  int field = 0;
  if (PyArg_ParseTuple(args, "ni:batch", &batch, &field) == 0) return nullptr;
  if (batch < 0) {
    PyErr_SetString(PyExc_IndexError, "batch index must not be negative");
    return nullptr;
  }
  return make_export(self, field, batch);
}

PyObject* dataset_num_batches(PyObject* self, PyObject* /*unused*/) {
  return PyLong_FromSize_t(reinterpret_cast<DatasetObject*>(self)->dataset->num_batches());
}

void dataset_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete reinterpret_cast<DatasetObject*>(self)->dataset;
  --live;
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* make_dataset(PyObject* /*module*/, PyObject* args) {
  Py_ssize_t rows = 0;
  Py_ssize_t batch_size = 0;
  if (PyArg_ParseTuple(args, "nn:dataset", &rows, &batch_size) == 0) return nullptr;
  if (rows < 0 || batch_size < 1) {
    PyErr_SetString(PyExc_ValueError, "rows must be >= 0 and batch_size >= 1");
    return nullptr;
  }
  const auto n = static_cast<std::size_t>(rows);
  std::vector<float> features(n * 3);
  std::vector<std::int32_t> labels(n);
  auto mask = std::make_unique<bool[]>(n);  // std::vector<bool> has no data()
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t column = 0; column < 3; ++column)
      features[row * 3 + column] = static_cast<float>(row * 3 + column) + 0.5F;
    labels[row] = static_cast<std::int32_t>(1000 + row);
    mask[row] = row % 3 == 0;
  }
  std::unique_ptr<Probe> dataset;
  try {
    resident::DatasetOptions options;
    options.batch_size = static_cast<std::size_t>(batch_size);
    dataset = std::make_unique<Probe>(space(), options,
                                      resident::HostTensor<const float>(features.data(), {n, 3}),
                                      resident::HostTensor<const std::int32_t>(labels.data(), {n}),
                                      resident::HostTensor<const bool>(mask.get(), {n}));
  } catch (...) {
    return raise_current();
  }
  auto* self = reinterpret_cast<DatasetObject*>(dataset_type->tp_alloc(dataset_type, 0));
  if (self == nullptr) return nullptr;
  self->dataset = dataset.release();
  ++live;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* used_bytes(PyObject* /*module*/, PyObject* /*unused*/) {
  return PyLong_FromSize_t(space().used_bytes());
}

PyObject* live_datasets(PyObject* /*module*/, PyObject* /*unused*/) {
  return PyLong_FromSsize_t(live);
}

PyObject* header_version(PyObject* /*module*/, PyObject* /*unused*/) {
#if defined(DLPACK_MAJOR_VERSION)
  return Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
#else
  return Py_BuildValue("(ii)", DLPACK_VERSION / 100, DLPACK_VERSION / 10 % 10);
#endif
}

template <class F>
PyCFunction method(F function) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

PyMethodDef export_methods[] = {
    {"__dlpack__", method(export_dlpack), METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule of the view (\"dltensor_versioned\" when max_version >= (1, 0))."},
    {"__dlpack_device__", export_dlpack_device, METH_NOARGS, "(kDLCPU, 0)."},
    {nullptr, nullptr, 0, nullptr}};

// Made by the module alone: Python code cannot instantiate them empty.
#if defined(Py_TPFLAGS_DISALLOW_INSTANTIATION)
constexpr auto type_flags =
    static_cast<unsigned int>(Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION);
#else
constexpr auto type_flags = static_cast<unsigned int>(Py_TPFLAGS_DEFAULT);
#endif

PyType_Slot export_slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(export_dealloc)},
                              {Py_tp_methods, export_methods},
                              {0, nullptr}};

PyType_Spec export_spec = {"resident_dlpack_probe.Export", sizeof(ExportObject), 0, type_flags,
                           export_slots};

PyMethodDef dataset_methods[] = {
    {"field", dataset_field, METH_VARARGS, "field(f): an exporter of field f."},
    {"batch", dataset_batch, METH_VARARGS, "batch(k, f): an exporter of field f of batch k."},
    {"num_batches", dataset_num_batches, METH_NOARGS, "The number of batches."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot dataset_slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(dataset_dealloc)},
                               {Py_tp_methods, dataset_methods},
                               {0, nullptr}};

PyType_Spec dataset_spec = {"resident_dlpack_probe.Dataset", sizeof(DatasetObject), 0, type_flags,
                            dataset_slots};

PyMethodDef module_methods[] = {
    {"dataset", make_dataset, METH_VARARGS, "dataset(rows, batch_size): a new dataset."},
    {"used_bytes", used_bytes, METH_NOARGS, "Bytes the datasets' space holds."},
    {"live_datasets", live_datasets, METH_NOARGS, "Dataset objects alive."},
    {"header_version", header_version, METH_NOARGS, "The DLPack header's (major, minor)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                          "resident_dlpack_probe",
                          "DLPack exports of a resident dataset, for testing consumers.",
                          -1,
                          module_methods,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_resident_dlpack_probe() {
  dataset_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&dataset_spec));
  if (dataset_type == nullptr) return nullptr;
  export_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&export_spec));
  if (export_type == nullptr) return nullptr;
  return PyModule_Create(&module_def);
}
