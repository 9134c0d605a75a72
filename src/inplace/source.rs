//! Where the archived bytes come from: a [`Source`] is a byte slice (copied) or a
//! [`FromReader`] (read, with `std`), written straight into the room the load took in
//! the slot.
//!
//! Invariant: `fill` writes every byte of the room it is given, or fails; the load
//! reads the room only after `fill` returned `Ok`.

use core::mem::MaybeUninit;

/// Why a source could not fill the room it was given.
pub(crate) enum FillError {
    /// The reader failed or ended before the length it promised.
    #[cfg(feature = "std")]
    Read(std::io::Error),
}

mod sealed {
    pub trait Sealed {}
}

/// Archived bytes for [`Slots::load_archived`](crate::Slots::load_archived) and its
/// forms (feature `rkyv`): any `&T` where `T: AsRef<[u8]>` (a `&[u8]`, a `&Vec<u8>`,
/// rkyv's `&AlignedVec`: copied into the slot, so the source may sit at any address and
/// may go once the load returns), or a [`FromReader`] (read straight into the slot).
///
/// Sealed: the crate relies on `fill` writing every byte it is given.
///
/// ```
/// use scope_stack::inplace::Source;
///
/// fn size(source: impl Source) -> usize {
///     source.len()
/// }
/// assert_eq!(size(&[1u8, 2, 3]), 3);
/// assert_eq!(size(&vec![0u8; 10]), 10);
/// ```
pub trait Source: sealed::Sealed {
    /// How many bytes the archive takes in the slot.
    ///
    /// ```
    /// use scope_stack::inplace::Source;
    /// assert_eq!(Source::len(&&b"level"[..]), 5);
    /// ```
    fn len(&self) -> usize;

    /// Whether the archive is empty (which is never a valid archive).
    ///
    /// ```
    /// use scope_stack::inplace::Source;
    /// assert!(Source::is_empty(&&b""[..]));
    /// ```
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes all `dst.len()` bytes (which is `self.len()`), or fails.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn fill(self, dst: &mut [MaybeUninit<u8>]) -> Result<(), FillError>;
}

impl<T: AsRef<[u8]> + ?Sized> sealed::Sealed for &T {}

impl<T: AsRef<[u8]> + ?Sized> Source for &T {
    fn len(&self) -> usize {
        (*self).as_ref().len()
    }

    #[allow(private_interfaces)]
    fn fill(self, dst: &mut [MaybeUninit<u8>]) -> Result<(), FillError> {
        let src = self.as_ref();
        debug_assert_eq!(src.len(), dst.len());
        let n = src.len().min(dst.len());
        // SAFETY: `src` is `n` initialised bytes, `dst` is room for `n` bytes; a `u8`
        // and a `MaybeUninit<u8>` have one layout; the two cannot overlap, since `dst`
        // is borrowed mutably.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), n) };
        Ok(())
    }
}

/// Archived bytes read from a [`std::io::Read`] (a `File`, a socket, a decompressor)
/// straight into the slot, with no heap buffer between (features `rkyv` and `std`).
///
/// `len` is the archive's length in bytes (for a file, its `metadata().len()`); it is
/// read with `read_exact`, so a reader that ends sooner is an error. The room is zeroed
/// before the read (`Read` takes initialised memory): one pass over the bytes, far
/// cheaper than the read itself.
///
/// ```
/// use scope_stack::inplace::{FromReader, Source};
///
/// let file = std::io::Cursor::new(vec![0u8; 64]);
/// assert_eq!(FromReader::new(file, 64).len(), 64);
/// ```
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
#[derive(Debug)]
pub struct FromReader<R> {
    reader: R,
    len: usize,
}

#[cfg(feature = "std")]
impl<R: std::io::Read> FromReader<R> {
    /// `len` bytes of `reader`, to be read into a slot.
    ///
    /// ```
    /// use scope_stack::inplace::FromReader;
    /// let _source = FromReader::new(&b"bytes"[..], 5);
    /// ```
    pub fn new(reader: R, len: usize) -> Self {
        FromReader { reader, len }
    }
}

#[cfg(feature = "std")]
impl<R: std::io::Read> sealed::Sealed for FromReader<R> {}

#[cfg(feature = "std")]
impl<R: std::io::Read> Source for FromReader<R> {
    fn len(&self) -> usize {
        self.len
    }

    #[allow(private_interfaces)]
    fn fill(mut self, dst: &mut [MaybeUninit<u8>]) -> Result<(), FillError> {
        dst.fill(MaybeUninit::new(0));
        // SAFETY: every byte of `dst` was just initialised, and `u8` and
        // `MaybeUninit<u8>` have one layout; the borrow is `dst`'s own.
        let bytes = unsafe { &mut *(dst as *mut [MaybeUninit<u8>] as *mut [u8]) };
        self.reader.read_exact(bytes).map_err(FillError::Read)
    }
}
