/**
 * A saturated host's slot calendar (issue 21, finding 3; DESIGN §20 "Slot calendar"): the
 * freshness hook places such a host's next-due hours on free slots of its capacity instead of
 * at each URL's ideal hour, so its due times never bunch above the rate it may crawl at.
 *
 * Why: a host booked at exactly its cap C is a queue at utilisation 1. Each URL's ideal due
 * hour is independent of the others', so several fall within one cap interval, the frontier
 * spaces their starts by 1/C, and the host's fetches start hours late (≈ 11.6 h on capped
 * hosts in the simulator) — freshness lost to lateness, not to a lack of crawls. Spreading the
 * arrivals (at most one due per slot of 1/C) keeps the queue short without exceeding the cap.
 *
 * ## Slots
 * Slot k (an integer ≥ 0 over epoch time) stands for the due hour h(k) = ⌈k / C⌉. Due hours
 * are whole hours (the frontier's `nextDue` column), so two slots in a row may be an hour
 * closer than 1/C, but any j slots in a row span more than j / C − 1 hours: a host's booked
 * dues arrive no faster than C up to the hour grid. A URL goes to the free slot whose hour is
 * nearest its ideal hour within [lo, hi] (the caller's reach); when none is free, or the ideal
 * hour is past the horizon, it keeps its ideal hour unbooked.
 *
 * ## State
 * A ring of `CALENDAR_SLOTS` (1024) bits from the first slot not yet passed, plus C and that
 * slot's index: 144 bytes per calendar, kept only for hosts saturated at the last pass. The
 * horizon is 1024 / C hours (≈ 100 days at one crawl per 2.4 h); a due beyond it is left at
 * its ideal hour. Never does: time anything itself (the caller passes the clock), or know
 * which URL holds a slot (a re-timed URL frees a slot of its old hour, whichever).
 */

/** Slots a calendar holds ahead of the clock (bits of its ring). */
export const CALENDAR_SLOTS = 1024;
const WORDS = CALENDAR_SLOTS / 32;
/** Bytes of one calendar's durable form: C (f64), first slot (f64), the ring. */
export const CALENDAR_BYTES = 16 + CALENDAR_SLOTS / 8;

/** One host's booked slots (see the module comment). */
export class SlotCalendar {
  /** Slots per hour (the host's booked capacity C). */
  readonly perHour: number;
  /** First slot not yet passed; bit (k mod SLOTS) is slot k for k in [base, base + SLOTS). */
  #base: number;
  readonly #bits = new Uint32Array(WORDS);

  constructor(perHour: number, nowHours: number) {
    if (!(perHour > 0) || !Number.isFinite(perHour)) throw new RangeError(`SlotCalendar: slots per hour must be finite and > 0, received ${perHour}`);
    this.perHour = perHour;
    this.#base = this.firstSlotAt(Math.floor(nowHours));
  }

  /** The due hour slot k stands for: ⌈k / C⌉. */
  hourOf(k: number): number {
    return Math.ceil(k / this.perHour);
  }

  /** The first slot whose hour is ≥ `hour` (exact against `hourOf`, whatever the rounding). */
  firstSlotAt(hour: number): number {
    let k = Math.max(0, Math.floor((hour - 1) * this.perHour) + 1);
    while (k > 0 && this.hourOf(k - 1) >= hour) k--;
    while (this.hourOf(k) < hour) k++;
    return k;
  }

  /** First slot not yet passed. */
  get base(): number {
    return this.#base;
  }

  /** Whether slot k is booked (false outside the ring). */
  booked(k: number): boolean {
    if (k < this.#base || k >= this.#base + CALENDAR_SLOTS) return false;
    const i = k % CALENDAR_SLOTS;
    return (this.#bits[i >>> 5]! & (1 << (i & 31))) !== 0;
  }

  /** Booked slots in the ring. */
  bookedCount(): number {
    let n = 0;
    for (let w = 0; w < WORDS; w++) {
      let x = this.#bits[w]!;
      while (x !== 0) {
        x &= x - 1;
        n++;
      }
    }
    return n;
  }

  #set(k: number, on: boolean): void {
    const i = k % CALENDAR_SLOTS;
    if (on) this.#bits[i >>> 5]! |= 1 << (i & 31);
    else this.#bits[i >>> 5]! &= ~(1 << (i & 31));
  }

  /** Drops the slots whose hour is before the clock's hour. */
  advance(nowHours: number): void {
    const next = this.firstSlotAt(Math.floor(nowHours));
    if (next <= this.#base) return;
    if (next - this.#base >= CALENDAR_SLOTS) this.#bits.fill(0);
    else for (let k = this.#base; k < next; k++) this.#set(k, false);
    this.#base = next;
  }

  /**
   * Books the free slot whose hour is nearest `ideal` within [lo, hi] (hours; ties to the
   * earlier) and returns its hour, or returns undefined (nothing booked) when every slot there
   * is taken or outside the ring.
   */
  place(ideal: number, lo: number, hi: number): number | undefined {
    const end = this.#base + CALENDAR_SLOTS;
    const start = this.firstSlotAt(ideal);
    let up = start;
    let down = Math.min(start, end) - 1;
    for (;;) {
      const upHour = up < end ? this.hourOf(up) : Number.POSITIVE_INFINITY;
      const downHour = down >= this.#base ? this.hourOf(down) : Number.NEGATIVE_INFINITY;
      const upOk = upHour <= hi;
      const downOk = downHour >= lo;
      if (!upOk && !downOk) return undefined;
      if (downOk && (!upOk || ideal - downHour <= upHour - ideal)) {
        if (!this.booked(down)) {
          this.#set(down, true);
          return downHour;
        }
        down--;
      } else {
        if (!this.booked(up)) {
          this.#set(up, true);
          return upHour;
        }
        up++;
      }
    }
  }

  /** Frees one booked slot of `hour` (a re-timed URL leaving it); returns whether one was. */
  free(hour: number): boolean {
    for (let k = Math.max(this.#base, this.firstSlotAt(hour)); k < this.#base + CALENDAR_SLOTS && this.hourOf(k) === hour; k++) {
      if (this.booked(k)) {
        this.#set(k, false);
        return true;
      }
    }
    return false;
  }

  /** Writes the durable form (`CALENDAR_BYTES`) at `at`. */
  write(dv: DataView, at: number): void {
    dv.setFloat64(at, this.perHour, true);
    dv.setFloat64(at + 8, this.#base, true);
    // The ring in slot order from the base, so the bytes do not depend on where the ring starts.
    for (let w = 0; w < WORDS; w++) {
      let x = 0;
      for (let b = 0; b < 32; b++) if (this.booked(this.#base + w * 32 + b)) x |= 1 << b;
      dv.setUint32(at + 16 + w * 4, x >>> 0, true);
    }
  }

  /** Reads a durable form written by `write`; undefined when its C or base is not valid. */
  static read(dv: DataView, at: number): SlotCalendar | undefined {
    const perHour = dv.getFloat64(at, true);
    const base = dv.getFloat64(at + 8, true);
    if (!(perHour > 0) || !Number.isFinite(perHour) || !Number.isInteger(base) || base < 0 || base > 2 ** 53) return undefined;
    const c = new SlotCalendar(perHour, 0);
    c.#base = base;
    for (let w = 0; w < WORDS; w++) {
      const x = dv.getUint32(at + 16 + w * 4, true);
      for (let b = 0; b < 32; b++) if ((x >>> b) & 1) c.#set(base + w * 32 + b, true);
    }
    return c;
  }
}
