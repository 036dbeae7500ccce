//! The [`Device`] trait, the border between the oracle and whatever runs kernels:
//! load a module, allocate buffers, write them, launch a kernel, read back.
//!
//! Three implementations sit behind it: [`virt::VirtualDevice`], which executes
//! the device IR on the CPU and turns every memory-safety violation and data
//! race into an error; [`ptx::PtxDevice`], which executes libNVVM's PTX on the
//! CPU with the same checks (no race detection), so a CPU-only run checks what
//! a GPU would run; and [`cuda::CudaDevice`], which runs the PTX on a GPU.
//! [`auto`] picks the GPU when one is usable and says why not otherwise.
//!
//! Kernel ABI: a kernel parameter is a scalar (integer, float or pointer) or an
//! aggregate by value (`byval`, its bytes); the lowering flattens slices and
//! `DisjointSlice`s into (pointer, length) pairs. So a launch passes
//! [`KernelArg`]s only: a scalar, a buffer address or an aggregate's bytes.

pub mod abi;
mod auto;
pub mod cuda;
mod error;
pub mod ptx;
mod scalar;
pub mod virt;

pub use auto::{AutoDevice, auto};
pub use error::DeviceError;
pub use scalar::Scalar;

use device_ir::Module;

/// Entry `index` of one of a device's tables (`what`: "buffer", "module"),
/// or the error naming the handle no entry answers.
pub(crate) fn entry<'t, T>(
    table: &'t [T],
    index: u32,
    what: &'static str,
) -> Result<&'t T, DeviceError> {
    table
        .get(index as usize)
        .ok_or(DeviceError::BadHandle { what, index })
}

/// The byte range `offset .. offset + len` of `buffer`, which holds `size`
/// bytes: its start, or the error naming the range that does not fit.
pub(crate) fn buffer_range(
    buffer: Buffer,
    offset: u64,
    len: u64,
    size: u64,
) -> Result<u64, DeviceError> {
    let end = offset.saturating_add(len);
    if end > size {
        return Err(DeviceError::OutOfRange {
            buffer: buffer.0,
            start: offset,
            end,
            len: size,
        });
    }
    Ok(offset)
}

/// A buffer of device memory, allocated by one [`Device`]. Valid only on it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Buffer(pub(crate) u32);

impl Buffer {
    /// The buffer's index on its device, in allocation order.
    pub fn index(self) -> u32 {
        self.0
    }
}

/// A module loaded on one [`Device`]. Valid only on it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleHandle(pub(crate) u32);

/// A launch dimension (grid in blocks, or block in threads).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent along x.
    pub x: u32,
    /// Extent along y.
    pub y: u32,
    /// Extent along z.
    pub z: u32,
}

impl Dim3 {
    /// `(x, 1, 1)`.
    pub fn x(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }

    /// `(x, y, 1)`.
    pub fn xy(x: u32, y: u32) -> Self {
        Dim3 { x, y, z: 1 }
    }

    /// `(x, y, z)`.
    pub fn xyz(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }

    /// The number of points, `x * y * z`.
    pub fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

/// The shape of a launch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// The grid, in blocks.
    pub grid: Dim3,
    /// Each block, in threads.
    pub block: Dim3,
    /// Bytes of dynamic shared memory each block gets (CUDA's
    /// `sharedMemBytes`), beyond its static shared globals.
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A one-dimensional launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: Dim3::x(grid),
            block: Dim3::x(block),
            shared_bytes: 0,
        }
    }

    /// A two-dimensional launch.
    pub fn xy(grid: (u32, u32), block: (u32, u32)) -> Self {
        LaunchConfig {
            grid: Dim3::xy(grid.0, grid.1),
            block: Dim3::xy(block.0, block.1),
            shared_bytes: 0,
        }
    }

    /// This launch with `bytes` of dynamic shared memory per block.
    pub fn with_shared_bytes(self, bytes: u32) -> Self {
        LaunchConfig {
            shared_bytes: bytes,
            ..self
        }
    }

    /// A three-dimensional launch.
    pub fn xyz(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        LaunchConfig {
            grid: Dim3::xyz(grid.0, grid.1, grid.2),
            block: Dim3::xyz(block.0, block.1, block.2),
            shared_bytes: 0,
        }
    }
}

/// One kernel argument. Integers must have the parameter's exact width (their
/// signedness does not matter); pointers are buffer addresses or null; an
/// aggregate by value is its bytes, exactly as many as its `byval` type.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// An `i1`.
    Bool(bool),
    /// An `i8`.
    U8(u8),
    /// An `i8`.
    I8(i8),
    /// An `i16`.
    U16(u16),
    /// An `i16`.
    I16(i16),
    /// An `i32`.
    U32(u32),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    U64(u64),
    /// An `i64`.
    I64(i64),
    /// An `i128` parameter's value, from a `u128`.
    U128(u128),
    /// An `i128`.
    I128(i128),
    /// A `float`.
    F32(f32),
    /// A `double`.
    F64(f64),
    /// The address of byte 0 of a buffer, for a generic or global pointer.
    Buffer(Buffer),
    /// The address of byte `offset` of a buffer.
    BufferAt(Buffer, u64),
    /// The null pointer.
    Null,
    /// An aggregate passed by value (a `byval` parameter): its bytes, in
    /// the layout the kernel reads, and its pointers to buffers.
    Bytes(Aggregate),
}

/// The bytes of an aggregate passed by value, and the buffers its pointer
/// fields point at: each device writes a buffer's address, which only it
/// knows, at its offset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aggregate {
    /// The bytes, little-endian; a pointer field's 8 are overwritten.
    pub bytes: Vec<u8>,
    /// Per pointer field: its offset in `bytes` and the buffer whose byte 0
    /// it points at.
    pub pointers: Vec<(u64, Buffer)>,
}

impl Aggregate {
    /// The bytes with each pointer field holding `address(buffer)`.
    pub fn with_addresses(
        &self,
        mut address: impl FnMut(Buffer) -> Result<u64, DeviceError>,
    ) -> Result<Vec<u8>, DeviceError> {
        let mut bytes = self.bytes.clone();
        for &(at, buffer) in &self.pointers {
            let a = address(buffer)?.to_le_bytes();
            let field = usize::try_from(at)
                .ok()
                .and_then(|at| bytes.get_mut(at..at.checked_add(8)?))
                .ok_or_else(|| {
                    DeviceError::Unsupported(format!(
                        "a pointer field at byte {at} of an aggregate of {} bytes",
                        self.bytes.len()
                    ))
                })?;
            field.copy_from_slice(&a);
        }
        Ok(bytes)
    }
}

impl From<Vec<u8>> for Aggregate {
    fn from(bytes: Vec<u8>) -> Self {
        Aggregate {
            bytes,
            pointers: Vec::new(),
        }
    }
}

/// What a device loads: the device IR (the virtual device runs it; the CUDA
/// backend uses it to check launch arguments) and the PTX libNVVM made of it (the
/// CUDA backend runs it).
#[derive(Copy, Clone, Debug)]
pub struct Program<'a> {
    /// The verified device-IR module.
    pub ir: Option<&'a Module>,
    /// The PTX text.
    pub ptx: Option<&'a str>,
}

impl<'a> Program<'a> {
    /// A program with only device IR (enough for the virtual device).
    pub fn ir(module: &'a Module) -> Self {
        Program {
            ir: Some(module),
            ptx: None,
        }
    }

    /// A program with device IR and its PTX.
    pub fn with_ptx(module: &'a Module, ptx: &'a str) -> Self {
        Program {
            ir: Some(module),
            ptx: Some(ptx),
        }
    }

    /// A program with only PTX: the CUDA backend then cannot check arguments.
    pub fn ptx_only(ptx: &'a str) -> Self {
        Program {
            ir: None,
            ptx: Some(ptx),
        }
    }
}

/// Where a device's float math functions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatMath {
    /// The host's own `f32`/`f64` methods (the virtual device): results are
    /// the host run's, bit for bit.
    AsHost,
    /// NVIDIA's libdevice, as libNVVM links it into the PTX (a GPU): each
    /// function within the CUDA guide's documented error.
    Libdevice,
}

/// Something that runs kernels: load a module, allocate, launch, read back.
///
/// Every method reports failure as a [`DeviceError`]; none panics on bad input.
pub trait Device: Send {
    /// Which device this is, for reports: `virtual device`, or the GPU's name.
    fn describe(&self) -> String;

    /// Whose code computes the approximate float functions (`sin`, `exp`,
    /// ...): the comparison with the host allows a libdevice device their
    /// documented error ([`crate::tolerance`]) and holds one that computes
    /// them as the host does to the bit.
    fn float_math(&self) -> FloatMath {
        FloatMath::AsHost
    }

    /// Loads a program. Globals get their initial contents here and keep their
    /// values across launches of the module.
    fn load(&mut self, program: &Program<'_>) -> Result<ModuleHandle, DeviceError>;

    /// Allocates `bytes` bytes of global memory, aligned to 256 bytes. Its
    /// contents are undefined until written: the virtual device refuses to read
    /// them back or let a kernel read them.
    fn alloc(&mut self, bytes: usize) -> Result<Buffer, DeviceError>;

    /// Writes `bytes` into `buffer` from byte `offset` on.
    fn write(&mut self, buffer: Buffer, offset: usize, bytes: &[u8]) -> Result<(), DeviceError>;

    /// Reads the whole of `buffer`.
    fn read(&mut self, buffer: Buffer) -> Result<Vec<u8>, DeviceError>;

    /// Writes `bytes` over the whole of global `symbol` of `module`, which
    /// must be one the host writes (constant memory: see
    /// [`abi::host_written_global`]), between launches: CUDA's
    /// `cudaMemcpyToSymbol`. The launches after read the new bytes.
    fn write_symbol(
        &mut self,
        module: ModuleHandle,
        symbol: &str,
        bytes: &[u8],
    ) -> Result<(), DeviceError>;

    /// Runs `kernel` of `module` on `config.grid` blocks of `config.block`
    /// threads with `args`, and waits for it to finish.
    fn launch(
        &mut self,
        module: ModuleHandle,
        kernel: &str,
        config: LaunchConfig,
        args: &[KernelArg],
    ) -> Result<(), DeviceError>;
}

/// Typed helpers over any [`Device`].
pub trait DeviceExt: Device {
    /// Allocates a buffer holding `values`.
    fn upload<T: Scalar>(&mut self, values: &[T]) -> Result<Buffer, DeviceError> {
        let bytes = scalar::to_bytes(values);
        let buffer = self.alloc(bytes.len())?;
        self.write(buffer, 0, &bytes)?;
        Ok(buffer)
    }

    /// Allocates a buffer of `len` zeroed values of `T`.
    fn zeroed<T: Scalar>(&mut self, len: usize) -> Result<Buffer, DeviceError> {
        let bytes = vec![0u8; len.saturating_mul(T::SIZE)];
        let buffer = self.alloc(bytes.len())?;
        self.write(buffer, 0, &bytes)?;
        Ok(buffer)
    }

    /// Reads `buffer` back as values of `T` (a trailing partial value is dropped).
    fn download<T: Scalar>(&mut self, buffer: Buffer) -> Result<Vec<T>, DeviceError> {
        Ok(scalar::from_bytes(&self.read(buffer)?))
    }
}

impl<D: Device + ?Sized> DeviceExt for D {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aggregates_pointer_fields_get_each_buffers_address() {
        let a = Aggregate {
            bytes: vec![0xaa; 20],
            pointers: vec![(12, Buffer(1)), (0, Buffer(0))],
        };
        let got = a
            .with_addresses(|b| Ok(0x1000 + u64::from(b.0)))
            .expect("in range");
        assert_eq!(got[..8], 0x1000u64.to_le_bytes());
        assert_eq!(got[8..12], [0xaa; 4]);
        assert_eq!(got[12..20], 0x1001u64.to_le_bytes());
        let short = Aggregate {
            bytes: vec![0; 10],
            pointers: vec![(4, Buffer(0))],
        };
        let e = short.with_addresses(|_| Ok(1)).expect_err("past the end");
        assert!(
            e.to_string()
                .contains("a pointer field at byte 4 of an aggregate of 10 bytes"),
            "{e}"
        );
    }
}
