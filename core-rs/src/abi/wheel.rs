//! Exports for the hierarchical timing wheel ([`crate::wheel`]). The wheel is an opaque
//! handle from [`meguri_wheel_new`]; ids and ticks are u32.

use crate::wheel::TimingWheel;

/// Turns a handle back into an exclusive reference.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`] with no other reference alive (the
/// single-threaded JS caller never overlaps calls).
unsafe fn wheel_mut<'a>(h: *mut TimingWheel) -> &'a mut TimingWheel {
    // SAFETY: the caller guarantees `h` is live and unaliased for the call.
    unsafe { &mut *h }
}

/// Creates an empty wheel whose clock reads `now` and returns its handle.
#[no_mangle]
pub extern "C" fn meguri_wheel_new(now: u32) -> *mut TimingWheel {
    Box::into_raw(Box::new(TimingWheel::new(now)))
}

/// Frees a wheel.
///
/// # Safety
/// `h` must come from [`meguri_wheel_new`] and not have been freed; null is ignored.
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_free(h: *mut TimingWheel) {
    if !h.is_null() {
        // SAFETY: the caller guarantees `h` is a live box from meguri_wheel_new, freed once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Number of scheduled ids.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_len(h: *mut TimingWheel) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.len()
}

/// The wheel's clock (the last tick processed).
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_now(h: *mut TimingWheel) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.now()
}

/// Bytes of linear memory the wheel holds.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_memory_bytes(h: *mut TimingWheel) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.memory_bytes()
}

/// Schedules (or moves) one id.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_schedule(h: *mut TimingWheel, id: u32, tick: u32) {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.schedule(id, tick)
}

/// Schedules `n` ids at their ticks, in order (a later entry for the same id wins).
///
/// # Safety
/// `h` live; `ids` and `ticks` each point to `n` readable aligned u32 values.
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_schedule_batch(h: *mut TimingWheel, ids: *const u32, ticks: *const u32, n: usize) {
    if n == 0 {
        return;
    }
    // SAFETY: both regions hold n aligned u32 values per the contract.
    let (ids, ticks) = unsafe { (std::slice::from_raw_parts(ids, n), std::slice::from_raw_parts(ticks, n)) };
    // SAFETY: `h` is live and unaliased per the contract.
    unsafe { wheel_mut(h) }.schedule_batch(ids, ticks)
}

/// Cancels `id`; returns 1 if it was scheduled, else 0.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_cancel(h: *mut TimingWheel, id: u32) -> u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.cancel(id) as u32
}

/// The tick `id` is scheduled at, or -1 when it is not scheduled (an f64 so a u32 tick and
/// the absent marker both cross without BigInt).
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_tick_of(h: *mut TimingWheel, id: u32) -> f64 {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.tick_of(id).map_or(-1.0, f64::from)
}

/// The earliest scheduled tick, or -1 when the wheel is empty.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_next_tick(h: *mut TimingWheel) -> f64 {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.next_tick().map_or(-1.0, f64::from)
}

/// Removes every id due by `now` and returns how many; read them with
/// [`meguri_wheel_out_ptr`] before the next call on this wheel.
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_advance(h: *mut TimingWheel, now: u32) -> usize {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.advance(now).len()
}

/// Byte offset of the ids the last advance returned (valid until the next call on this wheel
/// or any allocation).
///
/// # Safety
/// `h` must be a live handle from [`meguri_wheel_new`].
#[no_mangle]
pub unsafe extern "C" fn meguri_wheel_out_ptr(h: *mut TimingWheel) -> *const u32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { wheel_mut(h) }.last_out().as_ptr()
}
