//! Asymmetric fences: a cheap [`light`] fence for a path that runs on every operation,
//! and a costly [`heavy`] fence for a path that runs rarely, which together order as two
//! `SeqCst` fences would.
//!
//! The pattern they serve is store buffering (Dekker's handshake). The frequent side
//! stores a flag, fences with [`light`], and loads the other side's flag; the rare side
//! stores (or read-modify-writes) its flag, fences with [`heavy`], and loads the
//! frequent side's flag. Invariant this module keeps: **in every such pairing, at least
//! one side's load sees the other side's store** (or a later value of that word).
//! Neither side can read the other's old value while the other reads its old value.
//!
//! # Which fence each platform gets
//!
//! - **Linux, outside Miri and loom:** the first pool built registers the process for
//!   `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` (Linux 4.14 and later), once
//!   ([`prepare`]). From then on [`light`] is a compiler fence only (no instruction at
//!   all) and [`heavy`] is that system call: the kernel interrupts every core that runs
//!   a thread of this process and has each execute a full memory barrier before the call
//!   returns. A frequent side whose store was still in its core's store buffer when the
//!   rare side called has drained it by the time the rare side loads; a frequent side
//!   that had not stored yet loads after the barrier, so it sees the rare side's flag.
//!   The compiler fence keeps the compiler from moving the frequent side's load above
//!   its store. This is the fence pairing of Linux's RCU, of tcmalloc's per-CPU cache
//!   drain, and of the `membarrier` crate.
//! - **Everywhere else** (other systems, a kernel without the command, Miri, loom):
//!   both are `fence(SeqCst)`, the textbook answer to store buffering, and the pairing
//!   the loom models check. The frequent side then pays a full fence (about the price of
//!   the compare-exchange it replaces); it stays correct.
//!
//! The choice is made once, before any pool exists, and never changes afterwards: a
//! thread that reads "membarrier" uses the compiler fence, and every rare side that
//! pairs with it, running later on the same pool, reads the same answer and makes the
//! call.

#[cfg(all(target_os = "linux", not(miri), not(loom)))]
mod imp {
    use core::sync::atomic::{compiler_fence, fence, AtomicU8, Ordering};

    const UNKNOWN: u8 = 0;
    const MEMBARRIER: u8 = 1;
    const FENCES: u8 = 2;

    /// Which fences this process uses: `UNKNOWN` until [`prepare`] ran once.
    static STRATEGY: AtomicU8 = AtomicU8::new(UNKNOWN);

    // From <linux/membarrier.h>.
    const CMD_QUERY: libc::c_long = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn membarrier(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: the `membarrier` system call takes a command, flags and a CPU id, all
        // plain integers, and touches no memory of ours. An unknown command (an old
        // kernel) returns -1 with `ENOSYS` or `EINVAL`, which the callers check.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    pub(crate) fn prepare() {
        if STRATEGY.load(Ordering::Acquire) != UNKNOWN {
            return;
        }
        let supported = membarrier(CMD_QUERY);
        let wanted = CMD_PRIVATE_EXPEDITED | CMD_REGISTER_PRIVATE_EXPEDITED;
        let chosen = if supported >= 0
            && supported & wanted == wanted
            && membarrier(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
        {
            MEMBARRIER
        } else {
            FENCES
        };
        // Two threads that prepare at once make the same calls and reach the same
        // answer (registering twice is allowed). Release: a thread that reads the
        // answer also sees the registration done.
        STRATEGY.store(chosen, Ordering::Release);
    }

    #[inline(always)]
    pub(crate) fn light() {
        // Relaxed: the value was set before any pool existed (see `prepare`), and that
        // happens before this thread reached a pool.
        if STRATEGY.load(Ordering::Relaxed) == MEMBARRIER {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    pub(crate) fn heavy() {
        if STRATEGY.load(Ordering::Relaxed) == MEMBARRIER {
            // After a successful registration the command fails only on a kernel bug;
            // the frequent sides rely on it, so a failure must not pass silently.
            let done = membarrier(CMD_PRIVATE_EXPEDITED);
            assert!(
                done == 0,
                "membarrier(PRIVATE_EXPEDITED) failed after registration"
            );
        } else {
            fence(Ordering::SeqCst);
        }
    }
}

#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
mod imp {
    use crate::sync::{fence, Ordering};

    pub(crate) fn prepare() {}

    #[inline(always)]
    pub(crate) fn light() {
        fence(Ordering::SeqCst);
    }

    pub(crate) fn heavy() {
        fence(Ordering::SeqCst);
    }
}

/// Chooses this process's fences, once (the first call makes at most two system calls;
/// later calls are one load). Call it before the memory that [`light`] and [`heavy`]
/// will order is shared with another thread.
#[inline]
pub(crate) fn prepare() {
    imp::prepare()
}

/// The frequent side's fence: between its store of its own flag and its load of the
/// other side's (module docs). A compiler fence where `membarrier` is in use.
#[inline(always)]
pub(crate) fn light() {
    imp::light()
}

/// The rare side's fence: between its store of its flag and its load of the frequent
/// side's (module docs). A system call where `membarrier` is in use (about a
/// microsecond, more while the other threads run).
#[inline]
pub(crate) fn heavy() {
    imp::heavy()
}
