//! Tensors crossing the C ABI: borrowed views over Rust slices for inputs
//! and caller-provided outputs, metadata-only specs, and owned
//! library-allocated outputs.

use crate::context::Device;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use guardjit_sys as sys;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

const CPU: sys::DLDevice = sys::DLDevice {
    device_type: sys::kDLCPU,
    device_id: 0,
};

/// Elements of `shape`, checked: sizes non-negative, product within i64.
fn numel(what: &str, shape: &[i64]) -> Result<usize> {
    if i32::try_from(shape.len()).is_err() {
        return Err(Error::invalid_argument(format!(
            "{what}: {} dims",
            shape.len()
        )));
    }
    shape.iter().try_fold(1usize, |n, &s| {
        if s < 0 {
            return Err(Error::invalid_argument(format!(
                "{what}: negative size in shape {shape:?}"
            )));
        }
        n.checked_mul(s as usize)
            .filter(|&n| i64::try_from(n).is_ok())
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{what}: shape {shape:?} has more than 2^63 elements"
                ))
            })
    })
}

/// Checks that a view with `shape` and `strides` (in elements, `None` =
/// contiguous) stays inside `len` elements, so the library reads and writes
/// only the slice.
fn check_extent(what: &str, len: usize, shape: &[i64], strides: Option<&[i64]>) -> Result<()> {
    let n = numel(what, shape)?;
    let Some(strides) = strides else {
        if n != len {
            return Err(Error::invalid_argument(format!(
                "{what}: shape {shape:?} has {n} elements but the slice has {len}"
            )));
        }
        return Ok(());
    };
    if strides.len() != shape.len() {
        return Err(Error::invalid_argument(format!(
            "{what}: {} strides for {} dims",
            strides.len(),
            shape.len()
        )));
    }
    if n == 0 {
        return Ok(()); // nothing is read or written
    }
    // The last element's offset; every other offset is below it.
    let mut last: u128 = 0;
    for (&size, &stride) in shape.iter().zip(strides) {
        if stride < 0 {
            return Err(Error::invalid_argument(format!(
                "{what}: negative stride in {strides:?} (not supported)"
            )));
        }
        last += (size as u128 - 1) * stride as u128;
    }
    if last >= len as u128 {
        return Err(Error::invalid_argument(format!(
            "{what}: shape {shape:?} with strides {strides:?} reaches element {last} of a slice of {len}"
        )));
    }
    Ok(())
}

/// The checks a view over memory the binding cannot see (another device's,
/// or raw host memory) can make: the shape's element count, one
/// non-negative stride per dim, a device with a valid ordinal, and data
/// aligned to the dtype.
fn check_raw_parts(
    what: &str,
    data: *const std::ffi::c_void,
    device: Device,
    dtype: DType,
    shape: &[i64],
    strides: Option<&[i64]>,
) -> Result<()> {
    let n = numel(what, shape)?;
    if let Some(strides) = strides {
        if strides.len() != shape.len() {
            return Err(Error::invalid_argument(format!(
                "{what}: {} strides for {} dims",
                strides.len(),
                shape.len()
            )));
        }
        if strides.iter().any(|&s| s < 0) {
            return Err(Error::invalid_argument(format!(
                "{what}: negative stride in {strides:?} (not supported)"
            )));
        }
    }
    if let Device::Cuda(id) = device {
        if id < 0 {
            return Err(Error::invalid_argument(format!(
                "{what}: CUDA device ordinal {id} is negative"
            )));
        }
    }
    if n > 0 && (data.is_null() || data as usize % dtype.size() != 0) {
        return Err(Error::invalid_argument(format!(
            "{what}: data {data:?} is NULL or not aligned to {dtype}'s {} bytes",
            dtype.size()
        )));
    }
    Ok(())
}

fn dl_tensor(
    data: *mut std::ffi::c_void,
    dtype: DType,
    shape: &[i64],
    strides: Option<&[i64]>,
) -> sys::DLTensor {
    dl_tensor_on(CPU, data, dtype, shape, strides)
}

fn dl_tensor_on(
    device: sys::DLDevice,
    data: *mut std::ffi::c_void,
    dtype: DType,
    shape: &[i64],
    strides: Option<&[i64]>,
) -> sys::DLTensor {
    sys::DLTensor {
        data,
        device,
        ndim: shape.len() as i32, // checked by numel()
        dtype: dtype.to_dlpack(),
        // The library only reads shape and strides.
        shape: shape.as_ptr().cast_mut(),
        strides: strides.map_or(ptr::null_mut(), |s| s.as_ptr().cast_mut()),
        byte_offset: 0,
    }
}

/// # Safety
/// `t.shape` points to `t.ndim` sizes (or ndim is 0), as in every DLTensor
/// this module makes or the library returns.
unsafe fn raw_shape<'x>(t: &sys::DLTensor) -> &'x [i64] {
    if t.ndim <= 0 || t.shape.is_null() {
        &[]
    } else {
        // SAFETY: per the caller.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }
}

/// # Safety
/// As `raw_shape`, for strides (NULL = contiguous).
unsafe fn raw_strides<'x>(t: &sys::DLTensor) -> Option<&'x [i64]> {
    if t.strides.is_null() {
        None
    } else if t.ndim <= 0 {
        Some(&[])
    } else {
        // SAFETY: per the caller.
        Some(unsafe { std::slice::from_raw_parts(t.strides, t.ndim as usize) })
    }
}

/// A CPU tensor borrowed from a Rust slice, read by a call (inputs,
/// constants). The dtype comes from the element type.
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    raw: sys::DLTensor,
    _borrow: PhantomData<&'a [u8]>,
}

// SAFETY: a TensorView is a shared borrow of Element (Send + Sync) data and
// of i64 slices; nothing is written through it.
unsafe impl Send for TensorView<'_> {}
// SAFETY: as above.
unsafe impl Sync for TensorView<'_> {}

impl<'a> TensorView<'a> {
    /// A contiguous (row-major) view: `shape`'s element count must equal
    /// `data.len()`. An empty `shape` is a scalar (one element).
    pub fn new<T: Element>(data: &'a [T], shape: &'a [i64]) -> Result<Self> {
        check_extent("TensorView::new", data.len(), shape, None)?;
        Ok(TensorView {
            raw: dl_tensor(data.as_ptr().cast_mut().cast(), T::DTYPE, shape, None),
            _borrow: PhantomData,
        })
    }

    /// A strided view: `strides[d]` elements between neighbours in dim `d`
    /// (non-negative), element 0 at `data[0]`; every element must lie inside
    /// `data`.
    pub fn with_strides<T: Element>(
        data: &'a [T],
        shape: &'a [i64],
        strides: &'a [i64],
    ) -> Result<Self> {
        check_extent("TensorView::with_strides", data.len(), shape, Some(strides))?;
        Ok(TensorView {
            raw: dl_tensor(
                data.as_ptr().cast_mut().cast(),
                T::DTYPE,
                shape,
                Some(strides),
            ),
            _borrow: PhantomData,
        })
    }

    /// A view of memory this crate cannot borrow: CUDA device memory (from
    /// a CUDA library: cudarc, a `CUdeviceptr`, another framework's tensor),
    /// pinned host memory (`Device::CudaHost`), or raw host memory. A call
    /// on CUDA tensors enqueues on its stream ([`CallOptions::stream`]) and
    /// returns; see the header's rules for when the memory may be reused.
    ///
    /// # Safety
    /// `data` points to memory on `device` that holds every element `shape`
    /// and `strides` (in elements; `None` = contiguous) reach, of `dtype`,
    /// and stays valid, and unwritten by anyone else, until the call has
    /// read it (for CUDA: until the call's stream has run the call's work).
    ///
    /// [`CallOptions::stream`]: crate::CallOptions::stream
    pub unsafe fn from_raw_parts(
        data: *const std::ffi::c_void,
        device: Device,
        dtype: DType,
        shape: &'a [i64],
        strides: Option<&'a [i64]>,
    ) -> Result<Self> {
        check_raw_parts(
            "TensorView::from_raw_parts",
            data,
            device,
            dtype,
            shape,
            strides,
        )?;
        Ok(TensorView {
            raw: dl_tensor_on(device.to_raw(), data.cast_mut(), dtype, shape, strides),
            _borrow: PhantomData,
        })
    }

    pub fn dtype(&self) -> DType {
        DType::from_dlpack(self.raw.dtype).expect("views are made from Element types")
    }

    /// Where the data is: `Device::Cpu` for views of Rust slices.
    pub fn device(&self) -> Device {
        Device::from_raw(self.raw.device).expect("views are made on known devices")
    }

    pub fn shape(&self) -> &'a [i64] {
        // SAFETY: made by dl_tensor from a shape borrowed for 'a (or from a
        // Tensor's, which outlives 'a).
        unsafe { raw_shape(&self.raw) }
    }

    /// `None` for contiguous.
    pub fn strides(&self) -> Option<&'a [i64]> {
        // SAFETY: as shape().
        unsafe { raw_strides(&self.raw) }
    }

    /// The view's metadata (dtype, shape, strides) without its data.
    pub fn spec(&self) -> TensorSpec<'a> {
        TensorSpec {
            raw: sys::DLTensor {
                data: ptr::null_mut(),
                ..self.raw
            },
            _borrow: PhantomData,
        }
    }

    /// The DLTensor handed to the library; valid while the view's borrows are.
    pub fn as_raw(&self) -> &sys::DLTensor {
        &self.raw
    }
}

impl fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorView")
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .finish()
    }
}

/// A CPU tensor borrowed mutably from a Rust slice: a caller-provided
/// output of [`Function::call`](crate::Function::call). Its dtype and shape
/// must be the output's; on error nothing has been written.
pub struct TensorViewMut<'a> {
    raw: sys::DLTensor,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: an exclusive borrow of Element (Send) data and shared borrows of
// i64 slices.
unsafe impl Send for TensorViewMut<'_> {}
// SAFETY: &TensorViewMut gives read-only access (shape, dtype, a view).
unsafe impl Sync for TensorViewMut<'_> {}

impl<'a> TensorViewMut<'a> {
    /// A contiguous (row-major) view: `shape`'s element count must equal
    /// `data.len()`.
    pub fn new<T: Element>(data: &'a mut [T], shape: &'a [i64]) -> Result<Self> {
        check_extent("TensorViewMut::new", data.len(), shape, None)?;
        Ok(TensorViewMut {
            raw: dl_tensor(data.as_mut_ptr().cast(), T::DTYPE, shape, None),
            _borrow: PhantomData,
        })
    }

    /// A strided view (see [`TensorView::with_strides`]). The library
    /// refuses strides under which two elements overlap.
    pub fn with_strides<T: Element>(
        data: &'a mut [T],
        shape: &'a [i64],
        strides: &'a [i64],
    ) -> Result<Self> {
        check_extent(
            "TensorViewMut::with_strides",
            data.len(),
            shape,
            Some(strides),
        )?;
        Ok(TensorViewMut {
            raw: dl_tensor(data.as_mut_ptr().cast(), T::DTYPE, shape, Some(strides)),
            _borrow: PhantomData,
        })
    }

    /// A writable view of memory this crate cannot borrow (see
    /// [`TensorView::from_raw_parts`]): a caller-provided output on a CUDA
    /// device, in pinned host memory or in raw host memory.
    ///
    /// # Safety
    /// As [`TensorView::from_raw_parts`], and nothing else reads or writes
    /// the elements until the call has written them (for CUDA: until the
    /// call's stream has run the call's work).
    pub unsafe fn from_raw_parts(
        data: *mut std::ffi::c_void,
        device: Device,
        dtype: DType,
        shape: &'a [i64],
        strides: Option<&'a [i64]>,
    ) -> Result<Self> {
        check_raw_parts(
            "TensorViewMut::from_raw_parts",
            data,
            device,
            dtype,
            shape,
            strides,
        )?;
        Ok(TensorViewMut {
            raw: dl_tensor_on(device.to_raw(), data, dtype, shape, strides),
            _borrow: PhantomData,
        })
    }

    pub fn dtype(&self) -> DType {
        self.view().dtype()
    }

    /// Where the data is.
    pub fn device(&self) -> Device {
        self.view().device()
    }

    pub fn shape(&self) -> &'a [i64] {
        // SAFETY: made by dl_tensor from a shape borrowed for 'a (or from a
        // Tensor's, which outlives 'a).
        unsafe { raw_shape(&self.raw) }
    }

    /// A read-only view of the same data, for as long as this one is
    /// borrowed.
    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            raw: self.raw,
            _borrow: PhantomData,
        }
    }

    /// The DLTensor handed to the library.
    pub fn as_raw(&self) -> &sys::DLTensor {
        &self.raw
    }
}

impl fmt::Debug for TensorViewMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorViewMut")
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .finish()
    }
}

/// A tensor's metadata without data (dtype, shape, optional strides), for
/// the calls that read only metadata: [`Function::precompile`] and
/// [`Graph::compile_report`](crate::Graph::compile_report).
///
/// [`Function::precompile`]: crate::Function::precompile
#[derive(Clone, Copy)]
pub struct TensorSpec<'a> {
    raw: sys::DLTensor,
    _borrow: PhantomData<&'a [i64]>,
}

// SAFETY: shared borrows of i64 slices and a NULL data pointer.
unsafe impl Send for TensorSpec<'_> {}
// SAFETY: as above.
unsafe impl Sync for TensorSpec<'_> {}

impl<'a> TensorSpec<'a> {
    pub fn new(dtype: DType, shape: &'a [i64]) -> Result<Self> {
        numel("TensorSpec::new", shape)?;
        Ok(TensorSpec {
            raw: dl_tensor(ptr::null_mut(), dtype, shape, None),
            _borrow: PhantomData,
        })
    }

    pub fn with_strides(dtype: DType, shape: &'a [i64], strides: &'a [i64]) -> Result<Self> {
        numel("TensorSpec::with_strides", shape)?;
        if strides.len() != shape.len() {
            return Err(Error::invalid_argument(format!(
                "TensorSpec::with_strides: {} strides for {} dims",
                strides.len(),
                shape.len()
            )));
        }
        Ok(TensorSpec {
            raw: dl_tensor(ptr::null_mut(), dtype, shape, Some(strides)),
            _borrow: PhantomData,
        })
    }

    /// The same metadata on `device` (default `Device::Cpu`): what
    /// [`Function::precompile`] compiles for.
    ///
    /// [`Function::precompile`]: crate::Function::precompile
    pub fn on(mut self, device: Device) -> Self {
        self.raw.device = device.to_raw();
        self
    }

    pub fn dtype(&self) -> DType {
        DType::from_dlpack(self.raw.dtype).expect("specs are made from DTypes")
    }

    pub fn shape(&self) -> &'a [i64] {
        // SAFETY: made by dl_tensor from a shape borrowed for 'a (or from a
        // Tensor's, which outlives 'a).
        unsafe { raw_shape(&self.raw) }
    }

    pub fn as_raw(&self) -> &sys::DLTensor {
        &self.raw
    }
}

impl fmt::Debug for TensorSpec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorSpec")
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .finish()
    }
}

/// Anything that lends a DLTensor for the duration of a call.
pub(crate) trait AsDlTensor {
    fn dl(&self) -> *const sys::DLTensor;
}

impl AsDlTensor for TensorView<'_> {
    fn dl(&self) -> *const sys::DLTensor {
        &self.raw
    }
}

impl AsDlTensor for TensorViewMut<'_> {
    fn dl(&self) -> *const sys::DLTensor {
        &self.raw
    }
}

impl AsDlTensor for TensorSpec<'_> {
    fn dl(&self) -> *const sys::DLTensor {
        &self.raw
    }
}

/// Calls `f` with a `const DLTensor* const*` array over `tensors`, on the
/// stack for up to 8 tensors (no allocation on the call path).
pub(crate) fn with_dl_array<T: AsDlTensor, R>(
    tensors: &[T],
    f: impl FnOnce(*const *const sys::DLTensor) -> R,
) -> R {
    const STACK: usize = 8;
    if tensors.len() <= STACK {
        let mut array = [ptr::null::<sys::DLTensor>(); STACK];
        for (slot, t) in array.iter_mut().zip(tensors) {
            *slot = t.dl();
        }
        f(array.as_ptr())
    } else {
        let array: Vec<*const sys::DLTensor> = tensors.iter().map(AsDlTensor::dl).collect();
        f(array.as_ptr())
    }
}

/// A library-allocated output of
/// [`Function::call_alloc`](crate::Function::call_alloc): a contiguous
/// tensor with its own buffer, released (`gj_tensor_release`) on drop. It may
/// outlive the context and function that made it. A call on CUDA tensors
/// returns CUDA tensors (the device's caching allocator's memory, ready when
/// the call's stream reaches them): [`Tensor::data_ptr`] hands them to a CUDA
/// library, and the slice accessors refuse them.
pub struct Tensor {
    raw: NonNull<sys::DLManagedTensor>,
    dtype: DType,
    numel: usize,
    device: Device,
}

// SAFETY: the tensor owns its buffer; the header: "handles may be used from
// any thread", and gj_tensor_release has no thread affinity.
unsafe impl Send for Tensor {}
// SAFETY: &Tensor only reads the buffer and metadata.
unsafe impl Sync for Tensor {}

impl Tensor {
    /// Takes ownership of a DLManagedTensor from `gj_function_call_alloc`,
    /// checking it is a contiguous CPU, CUDA or pinned-host tensor of a
    /// guardjit dtype; releases it if not.
    ///
    /// # Safety
    /// `raw` is a non-NULL DLManagedTensor the caller owns, released with
    /// `gj_tensor_release` (or its deleter).
    pub unsafe fn from_raw(raw: *mut sys::DLManagedTensor) -> Result<Tensor> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::invalid_argument("Tensor::from_raw: NULL tensor"))?;
        // SAFETY: per the caller, a valid DLManagedTensor.
        let t = unsafe { &raw.as_ref().dl_tensor };
        let refuse = |why: String| {
            // SAFETY: owned per the caller, not used after this.
            unsafe { sys::gj_tensor_release(raw.as_ptr()) };
            Err(Error::new(
                crate::ErrorCode::Internal,
                format!("Tensor::from_raw: {why}"),
            ))
        };
        let Some(dtype) = DType::from_dlpack(t.dtype) else {
            return refuse(format!("unsupported DLPack dtype {:?}", t.dtype));
        };
        let device = match Device::from_raw(t.device) {
            Some(Device::Cpu) if t.device.device_id != 0 => None,
            d => d,
        };
        let Some(device) = device else {
            return refuse(format!(
                "not a CPU, CUDA or CUDA host tensor: {:?}",
                t.device
            ));
        };
        // SAFETY: a valid DLTensor's shape and strides.
        let (shape, strides) = unsafe { (raw_shape(t), raw_strides(t)) };
        let numel = match numel("Tensor::from_raw", shape) {
            Ok(n) => n,
            Err(e) => return refuse(e.message().to_string()),
        };
        if let Some(strides) = strides {
            let mut expected = 1i64;
            for (d, (&size, &stride)) in shape.iter().zip(strides).enumerate().rev() {
                if size > 1 && stride != expected {
                    return refuse(format!(
                        "not contiguous: shape {shape:?}, strides {strides:?} (dim {d})"
                    ));
                }
                expected *= size;
            }
        }
        if numel > 0 && (t.data as usize + t.byte_offset as usize) % dtype.size() != 0 {
            return refuse("misaligned data".to_string());
        }
        Ok(Tensor {
            raw,
            dtype,
            numel,
            device,
        })
    }

    /// Gives up ownership: the caller releases the tensor with
    /// `gj_tensor_release`.
    pub fn into_raw(self) -> *mut sys::DLManagedTensor {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    pub fn as_raw(&self) -> &sys::DLManagedTensor {
        // SAFETY: owned and valid until drop.
        unsafe { self.raw.as_ref() }
    }

    fn dl(&self) -> &sys::DLTensor {
        &self.as_raw().dl_tensor
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[i64] {
        // SAFETY: checked in from_raw; the tensor's metadata lives with it.
        unsafe { raw_shape(self.dl()) }
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<i64> {
        let shape = self.shape();
        let mut strides = vec![1i64; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1].max(1);
        }
        strides
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.numel
    }

    fn data(&self) -> *mut u8 {
        let t = self.dl();
        if self.numel == 0 {
            return NonNull::<u64>::dangling().as_ptr().cast();
        }
        // SAFETY: data + byte_offset is the first element (DLPack).
        unsafe { t.data.cast::<u8>().add(t.byte_offset as usize) }
    }

    /// Where the data is.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The first element's address (on [`Tensor::device`]): for a CUDA
    /// tensor, the `CUdeviceptr` to hand to a CUDA library. Valid until the
    /// tensor is dropped.
    pub fn data_ptr(&self) -> *mut std::ffi::c_void {
        self.data().cast()
    }

    fn check_dtype<T: Element>(&self, what: &str) -> Result<()> {
        if !self.device.is_host() {
            return Err(Error::invalid_argument(format!(
                "Tensor::{what}: the tensor is in {:?} memory, which the host cannot read; \
                 copy it with a CUDA library from data_ptr()",
                self.device
            )));
        }
        if T::DTYPE != self.dtype {
            return Err(Error::invalid_argument(format!(
                "Tensor::{what}: the tensor is {}, not {}",
                self.dtype,
                T::DTYPE
            )));
        }
        Ok(())
    }

    /// The elements in row-major order; `T` must match the dtype.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.check_dtype::<T>("as_slice")?;
        // SAFETY: a contiguous buffer of numel aligned Ts (from_raw), owned
        // by self; T's every value the library writes is valid (Element).
        Ok(unsafe { std::slice::from_raw_parts(self.data().cast::<T>(), self.numel) })
    }

    /// The elements in row-major order, writable; `T` must match the dtype.
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        self.check_dtype::<T>("as_mut_slice")?;
        // SAFETY: as as_slice, and &mut self makes the borrow exclusive.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.data().cast::<T>(), self.numel) })
    }

    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.as_slice().map(<[T]>::to_vec)
    }

    /// The raw bytes, whatever the dtype.
    ///
    /// # Panics
    /// On a CUDA tensor (its memory is not host memory).
    pub fn as_bytes(&self) -> &[u8] {
        assert!(
            self.device.is_host(),
            "Tensor::as_bytes: the tensor is in {:?} memory",
            self.device
        );
        // SAFETY: as as_slice; any byte is a valid u8.
        unsafe { std::slice::from_raw_parts(self.data(), self.numel * self.dtype.size()) }
    }

    /// A view for passing this tensor back in as an input.
    pub fn view(&self) -> TensorView<'_> {
        let t = self.dl();
        TensorView {
            raw: sys::DLTensor {
                data: self.data().cast(),
                byte_offset: 0,
                strides: ptr::null_mut(),
                ..*t
            },
            _borrow: PhantomData,
        }
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: owned, released once.
        unsafe { sys::gj_tensor_release(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Tensor");
        if self.device != Device::Cpu {
            d.field("device", &self.device);
        }
        d.field("dtype", &self.dtype)
            .field("shape", &self.shape())
            .finish()
    }
}
