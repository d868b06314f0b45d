//! The user_events ABI, declared here because distribution headers lack it.
//!
//! Layouts and numbers follow `include/uapi/linux/user_events.h` (Linux 6.4+).
//! References: Documentation/trace/user_events.rst.

/// `struct user_reg`: the argument of `DIAG_IOCSREG`.
///
/// The kernel declares it `__attribute__((__packed__))`, 28 bytes.
#[repr(C, packed)]
#[derive(Debug, Default, Clone, Copy)]
pub struct UserReg {
    /// Size of this struct, so the kernel can tell ABI versions apart.
    pub size: u32,
    /// Bit the kernel sets in the enable word while a tracer is attached.
    pub enable_bit: u8,
    /// Size of the enable word: 4 or 8 bytes.
    pub enable_size: u8,
    /// `USER_EVENT_REG_*` flags.
    pub flags: u16,
    /// Address of the enable word in this process.
    pub enable_addr: u64,
    /// Address of the NUL-terminated `name[:flags] field;field` string.
    pub name_args: u64,
    /// Out: the index to put in the first 4 bytes of every write.
    pub write_index: u32,
}

/// `struct user_unreg`: the argument of `DIAG_IOCSUNREG`, 16 bytes.
#[repr(C, packed)]
#[derive(Debug, Default, Clone, Copy)]
pub struct UserUnreg {
    /// Size of this struct, so the kernel can tell ABI versions apart.
    pub size: u32,
    /// Bit to stop updating, as given in `UserReg::enable_bit`.
    pub disable_bit: u8,
    /// Must be 0.
    pub reserved: u8,
    /// Must be 0.
    pub reserved2: u16,
    /// Address of the enable word, as given in `UserReg::enable_addr`.
    pub disable_addr: u64,
}

const _: () = assert!(core::mem::size_of::<UserReg>() == 28);
const _: () = assert!(core::mem::size_of::<UserUnreg>() == 16);

/// `USER_EVENT_REG_PERSIST`: the event outlives its last registration.
/// Needs CAP_PERFMON.
pub const USER_EVENT_REG_PERSIST: u16 = 1 << 0;
/// `USER_EVENT_REG_MULTI_FORMAT`: one name may carry several formats; the
/// tracepoint becomes `user_events_multi/<name>.<hexid>`. Linux 6.10+.
pub const USER_EVENT_REG_MULTI_FORMAT: u16 = 1 << 1;

// The ioctl numbers are `_IOWR('*', 0, struct user_reg *)` and friends: the
// size encoded is that of a pointer, not of the struct.
const fn ioc(dir: u64, nr: u64) -> u64 {
    const IOC_NRSHIFT: u64 = 0;
    const IOC_TYPESHIFT: u64 = 8;
    const IOC_SIZESHIFT: u64 = 16;
    const IOC_DIRSHIFT: u64 = 30;
    let size = core::mem::size_of::<usize>() as u64;
    (dir << IOC_DIRSHIFT) | (size << IOC_SIZESHIFT) | ((b'*' as u64) << IOC_TYPESHIFT) | (nr << IOC_NRSHIFT)
}
const IOC_WRITE: u64 = 1;
const IOC_READ: u64 = 2;

/// `DIAG_IOCSREG`: register an event and its enable word.
pub const DIAG_IOCSREG: u64 = ioc(IOC_READ | IOC_WRITE, 0);
/// `DIAG_IOCSDEL`: delete an event by name (not while registered).
pub const DIAG_IOCSDEL: u64 = ioc(IOC_WRITE, 1);
/// `DIAG_IOCSUNREG`: stop the kernel updating an enable word.
pub const DIAG_IOCSUNREG: u64 = ioc(IOC_WRITE, 2);

#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(DIAG_IOCSREG == 0xC008_2A00);
    assert!(DIAG_IOCSDEL == 0x4008_2A01);
    assert!(DIAG_IOCSUNREG == 0x4008_2A02);
};

/// Longest `name_args` string the kernel accepts, without its NUL.
pub const MAX_NAME_ARGS_LEN: usize = 511;

/// Largest `char[N]` array the kernel accepts in a field.
pub const MAX_CHAR_ARRAY_LEN: usize = 1024;

/// perf refuses (with a WARN_ONCE, and drops) trace records larger than
/// `PERF_MAX_TRACE_SIZE` (8192 bytes), counted as the 8-byte `trace_entry`
/// header plus the payload, rounded up to 8. So the payload may be 8184 bytes.
pub const MAX_PAYLOAD_LEN: usize = 8192 - TRACE_ENTRY_LEN;

/// `struct trace_entry` (type, flags, preempt_count, pid) that precedes every
/// payload in tracefs and perf records.
pub const TRACE_ENTRY_LEN: usize = 8;

/// Encodes a `__rel_loc`/`__data_loc` word: length in the high 16 bits,
/// offset in the low 16.
#[inline]
pub const fn dyn_loc(offset: u16, len: u16) -> u32 {
    ((len as u32) << 16) | offset as u32
}
