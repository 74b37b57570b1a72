package sparkwin.runtime.spark.task

import java.nio.ByteBuffer

/** A key group's keys stored a bucket at a time: each bucket is one state entry holding its keys
  * with their engine state, so a call reads and writes a bucket once however many of its keys it
  * touches, and a group whose keys all fire (a flush, a session gap passing them all) reads and
  * deletes a few dozen entries, not one of each per key. Spark's state store costs 1-2.5 µs an
  * operation, little of it for a small value's bytes, and that count per key was what made a
  * million keys cost twice a thousand (DESIGN.md, "Keys in buckets").
  *
  * The buckets grow and shrink one at a time as the group's keys come and go (linear hashing): a
  * key lives in bucket `h mod 2^(L+1)`, or `h mod 2^L` when that is past the last bucket, where
  * 2^L is the largest power of two not above the count. Adding a bucket splits one and removing
  * the last merges it back, so a resize rewrites two entries, never the group. The count is the
  * group record's ([[GroupRecord]]), written in the same call as the buckets it describes.
  *
  * For one call of one group: buckets are read once when first used, and [[flush]] writes those
  * that changed. Where the loop holds its writes (real-time mode, a call a row) one of these
  * goes on from call to call of its group ([[KeptBuckets]], `keeps`): its buckets stay decoded,
  * their keys' hashes made, instead of being looked up among the held writes and read again.
  */
final class KeyBuckets(
    private var host: GroupHost,
    initialCount: Int,
    initialKeys: Long,
    keeps: Boolean = false
) {
  import KeyBuckets._
  require(initialCount >= 1, s"a key group has at least one bucket, not $initialCount")

  private var buckets = initialCount
  private var keys = initialKeys // the group's keys with state, as this call changes them
  private var used = new java.util.HashMap[Integer, Bucket]()
  // The buckets this call changed, by index, each once: a flush writes these, not every one used.
  private var touched = new Array[Int](8)
  private var touchedCount = 0
  // Where the last `get` found (or missed) its key: the loop reads a key's state, runs the engine,
  // then writes or removes the same array, and the write should neither hash the key again nor
  // scan its bucket (at 100k keys the scans were a fifth of the buckets' time). Any write forgets
  // it, so no change can move the entry under it.
  private var lastKey: Array[Byte] = _
  private var lastBucket: Bucket = _
  private var lastHash = 0
  private var lastIndex = -1
  private var lastAt = -1

  /** The group's next call goes on with these buckets (`keeps`), given its `host` and what its
    * record says; false when the record says another count of buckets or keys than these hold
    * (then a new one reads them).
    */
  def reopen(host: GroupHost, count: Int, liveKeys: Long): Boolean =
    keeps && count == buckets && liveKeys == keys && {
      this.host = host
      lastKey = null
      true
    }

  /** How many buckets are decoded in memory (what a kept one costs). */
  def decoded: Int = used.size

  /** How many buckets the group has now. */
  def count: Int = buckets

  def get(key: Array[Byte]): Array[Byte] = {
    locate(key)
    if (lastAt < 0) null else lastBucket.value(lastAt)
  }

  /** `key`'s state as it lies: the object [[putState]] left (a bucket kept across calls), or
    * its bytes; null: none.
    */
  def getState(key: Array[Byte]): AnyRef = {
    locate(key)
    if (lastAt < 0) null else lastBucket.state(lastAt)
  }

  /** Puts `key`'s state as an object, encoded with its bucket ([[GroupHost.keep]]): a key that
    * gets row after row between two writes of its bucket is encoded once, not per row.
    */
  def putState(key: Array[Byte], state: Encodable): Unit = {
    val b = located(key)
    touch(lastIndex, b)
    if (lastAt >= 0) b.setState(lastAt, state) else add(b, key, Array.emptyByteArray, state)
  }

  /** Finds `key`'s bucket and place (-1: absent) into `lastBucket` and `lastAt`, unless the last
    * `get` was of this very array.
    */
  private def locate(key: Array[Byte]): Unit = if (!(key eq lastKey)) {
    lastKey = null // until all are set
    lastHash = KeyId.hash(key, 0, key.length)
    lastIndex = address(lastHash, buckets)
    lastBucket = bucket(lastIndex)
    lastAt = lastBucket.indexOf(key, lastHash)
    lastKey = key
  }

  /** What [[locate]] found, forgotten: the caller is about to change the buckets. */
  private def located(key: Array[Byte]): Bucket = {
    locate(key)
    lastKey = null
    lastBucket
  }

  def put(key: Array[Byte], value: Array[Byte]): Unit = {
    val b = located(key)
    touch(lastIndex, b)
    if (lastAt >= 0) b.setValue(lastAt, value) else add(b, key, value, null)
  }

  /** Adds `key`, which [[locate]] missed in `b`, with its state's bytes or object (non-null). */
  private def add(b: Bucket, key: Array[Byte], value: Array[Byte], state: Encodable): Unit = {
    b.add(key, 0, key.length, value, 0, value.length, lastHash)
    if (state != null) b.setState(b.size - 1, state)
    keys += 1
    // Split as keys come, so a call that brings many keys never scans a crowded bucket.
    if (keys > buckets.toLong * Load && buckets < MaxBuckets) split()
  }

  def remove(key: Array[Byte]): Unit = {
    val b = located(key)
    val i = lastAt
    if (i >= 0) {
      b.removeAt(i)
      touch(lastIndex, b)
      keys -= 1
    }
  }

  /** Bucket `index` (`b`) changed in this call. */
  private def touch(index: Int, b: Bucket): Unit = if (!b.changed) {
    b.changed = true
    if (touchedCount == touched.length) touched = java.util.Arrays.copyOf(touched, 2 * touchedCount)
    touched(touchedCount) = index
    touchedCount += 1
  }

  /** Shrinks the buckets to the keys left (merging only below a quarter of [[Load]] a bucket,
    * so a group whose keys hover at a boundary does not split and merge the same bucket every
    * call; to one with none), writes every bucket this call changed (an empty one is removed)
    * and forgets them, unless it `keeps` them for the group's next call (all but those merged
    * away).
    */
  def flush(): Unit = {
    lastKey = null
    val needed = (keys + Load - 1) / Load
    while (buckets > math.max(1L, 4 * needed)) merge()
    var t = 0
    while (t < touchedCount) {
      val index = touched(t)
      val b = used.get(Integer.valueOf(index))
      if (b.size > 0) { host.keep(entryKey(index), b); b.stored = true }
      else if (b.stored) { host.remove(entryKey(index)); b.stored = false }
      b.changed = false
      if (keeps && index >= buckets) used.remove(Integer.valueOf(index))
      t += 1
    }
    touchedCount = 0
    if (touched.length > SmallMap) touched = new Array[Int](8)
    if (!keeps) used = cleared(used)
  }

  /** Adds bucket `buckets`: the keys of the bucket it splits from go to one or the other. */
  private def split(): Unit = {
    val from = buckets - Integer.highestOneBit(buckets)
    val source = bucket(from)
    // No entry lies past the last bucket (a merge removes it), so a new one is not read.
    val target = used.computeIfAbsent(Integer.valueOf(buckets), _ => new Bucket(stored = false))
    buckets += 1
    var i = 0
    while (i < source.size) {
      if (address(source.hash(i), buckets) == from) i += 1
      else {
        target.addFrom(source, i)
        source.removeAt(i)
      }
    }
    touch(from, source)
    touch(buckets - 1, target)
  }

  /** Removes the last bucket: its keys go back to the bucket it split from. */
  private def merge(): Unit = {
    val last = buckets - 1
    val into = last - Integer.highestOneBit(last)
    val gone = bucket(last)
    val target = bucket(into)
    var i = 0
    while (i < gone.size) { target.addFrom(gone, i); i += 1 }
    gone.clear()
    touch(last, gone)
    touch(into, target)
    buckets -= 1
  }

  private def bucket(index: Int): Bucket = {
    val boxed = Integer.valueOf(index)
    var b = used.get(boxed)
    if (b == null) {
      val entry = entryKey(index)
      b = host.kept(entry) match {
        case kept: Bucket => kept // as the call before left it, still unwritten
        case _ => Bucket.read(host.get(entry), index)
      }
      used.put(boxed, b)
    }
    b
  }
}

object KeyBuckets {

  /** The keys a bucket holds on average once the group has grown to them. Measured on the keys
    * series (docs/benchmarks.md): about 40 keys a bucket was fastest at a million keys, 2 was no
    * faster than a key an entry; fewer keep a call that touches one key of a big group cheap.
    */
  val Load = 16

  /** The most buckets a group splits into (a key group past 16 million keys fills them more). */
  val MaxBuckets: Int = 1 << 20

  /** Bucket `i`'s entry: a tag byte and the index. Neither the group record (empty), the last
    * watermark (one byte) nor any key (an `UnsafeRow`, at least 8 bytes) has five.
    */
  def entryKey(index: Int): Array[Byte] = ByteBuffer.allocate(5).put(BucketTag).putInt(index).array()

  private val BucketTag: Byte = 2

  /** `map` emptied for a call's next use: cleared when small, else a new one, since a hash map's
    * walk and clear cost its capacity, which never shrinks (real-time mode makes a call a row,
    * and one firing call that touched thousands of entries made every call after it pay them).
    */
  def cleared[K, V](map: java.util.HashMap[K, V]): java.util.HashMap[K, V] =
    if (map.size > SmallMap) new java.util.HashMap[K, V]() else { map.clear(); map }

  private val SmallMap = 64

  /** The bucket of a key whose bytes hash to `hash`, among `count` (linear hashing's address). */
  def address(hash: Int, count: Int): Int = {
    val h = hash & Int.MaxValue
    val low = Integer.highestOneBit(count)
    val a = h & (2 * low - 1)
    if (a < count) a else h & (low - 1)
  }

  /** One bucket's keys and their state, as a call uses them; `stored` when the state store (or
    * the writes the host holds) has an entry for it. A host that holds writes keeps the object
    * itself until it writes ([[GroupHost.keep]]), so the group's next call goes on with it. Its
    * entry, big-endian: per key, the bytes' length and the bytes, then the state's length and the
    * state. Entry `i`'s key is `keyBytes(i)` from `keyAt(i)` for
    * `keyLength(i)` bytes, its state likewise: a stored bucket's point into the bytes read, so
    * the keys a call does not touch are never copied (nor hashed, unless the bucket splits).
    */
  private final class Bucket(var stored: Boolean) extends Encodable {
    private var n = 0
    private var keyBytes = new Array[Array[Byte]](4)
    private var keyAt = new Array[Int](4)
    private var keyLength = new Array[Int](4)
    private var stateBytes = new Array[Array[Byte]](4)
    private var stateAt = new Array[Int](4)
    private var stateLength = new Array[Int](4)
    private var stateObject = new Array[Encodable](4) // non-null: the state is this, not its bytes
    // Each key's hash, made when the bucket is searched a second time: a bucket kept across
    // calls (real-time mode, a call a row) is searched at every row, and scanning its keys' bytes,
    // an array each, was the most of a row's call at 100k keys; a bucket read for one key's
    // lookup hashes nothing.
    private var hashes: Array[Int] = _
    private var searched = false
    var changed = false

    def size: Int = n

    /** Where `key` (whose [[KeyId.hash]] is `hash`) lies, or -1. */
    def indexOf(key: Array[Byte], hash: Int): Int = {
      if (hashes == null && searched) {
        val made = new Array[Int](keyBytes.length)
        var j = 0
        while (j < n) { made(j) = this.hash(j); j += 1 }
        hashes = made
      }
      searched = true
      var i = 0
      while (i < n) {
        if (
          (hashes == null || hashes(i) == hash) && keyLength(i) == key.length &&
          sameBytes(keyBytes(i), keyAt(i), key)
        ) return i
        i += 1
      }
      -1
    }

    private def sameBytes(bytes: Array[Byte], at: Int, key: Array[Byte]): Boolean = {
      var j = key.length - 1 // keys' UnsafeRow bytes share their first words: compare from the end
      while (j >= 0 && bytes(at + j) == key(j)) j -= 1
      j < 0
    }

    def hash(i: Int): Int =
      if (hashes != null) hashes(i) else KeyId.hash(keyBytes(i), keyAt(i), keyLength(i))

    /** Entry `i`'s key bytes, copied. */
    def key(i: Int): Array[Byte] =
      java.util.Arrays.copyOfRange(keyBytes(i), keyAt(i), keyAt(i) + keyLength(i))

    def state(i: Int): AnyRef = if (stateObject(i) != null) stateObject(i) else value(i)

    def setState(i: Int, state: Encodable): Unit = stateObject(i) = state

    def value(i: Int): Array[Byte] = {
      settle(i)
      val bytes = stateBytes(i)
      if (stateAt(i) == 0 && stateLength(i) == bytes.length) bytes
      else java.util.Arrays.copyOfRange(bytes, stateAt(i), stateAt(i) + stateLength(i))
    }

    /** Entry `i`'s state as bytes, encoding the object [[setState]] left there, if any. */
    private def settle(i: Int): Unit = if (stateObject(i) != null) setValue(i, stateObject(i).encode())

    def setValue(i: Int, value: Array[Byte]): Unit = {
      stateObject(i) = null
      stateBytes(i) = value
      stateAt(i) = 0
      stateLength(i) = value.length
    }

    /** Adds a key and its state's bytes; `hash`: the key's, if the bucket keeps hashes. */
    def add(
        key: Array[Byte],
        kAt: Int,
        kLength: Int,
        state: Array[Byte],
        sAt: Int,
        sLength: Int,
        hash: Int
    ): Unit = {
      if (n == keyBytes.length) grow()
      keyBytes(n) = key
      keyAt(n) = kAt
      keyLength(n) = kLength
      stateBytes(n) = state
      stateAt(n) = sAt
      stateLength(n) = sLength
      stateObject(n) = null
      if (hashes != null) hashes(n) = hash
      n += 1
    }

    def addFrom(other: Bucket, i: Int): Unit = {
      add(
        other.keyBytes(i),
        other.keyAt(i),
        other.keyLength(i),
        other.stateBytes(i),
        other.stateAt(i),
        other.stateLength(i),
        if (hashes != null) other.hash(i) else 0
      )
      stateObject(n - 1) = other.stateObject(i)
    }

    private def grow(): Unit = {
      val size = 2 * n
      keyBytes = java.util.Arrays.copyOf(keyBytes, size)
      keyAt = java.util.Arrays.copyOf(keyAt, size)
      keyLength = java.util.Arrays.copyOf(keyLength, size)
      stateBytes = java.util.Arrays.copyOf(stateBytes, size)
      stateAt = java.util.Arrays.copyOf(stateAt, size)
      stateLength = java.util.Arrays.copyOf(stateLength, size)
      stateObject = java.util.Arrays.copyOf(stateObject, size)
      if (hashes != null) hashes = java.util.Arrays.copyOf(hashes, size)
    }

    /** Removes entry `i` by moving the last into its place: order within a bucket means nothing. */
    def removeAt(i: Int): Unit = {
      n -= 1
      keyBytes(i) = keyBytes(n)
      keyAt(i) = keyAt(n)
      keyLength(i) = keyLength(n)
      stateBytes(i) = stateBytes(n)
      stateAt(i) = stateAt(n)
      stateLength(i) = stateLength(n)
      stateObject(i) = stateObject(n)
      if (hashes != null) hashes(i) = hashes(n)
      keyBytes(n) = null
      stateBytes(n) = null
      stateObject(n) = null
    }

    def clear(): Unit = while (n > 0) removeAt(n - 1)

    def encode(): Array[Byte] = {
      var size = 0
      var i = 0
      while (i < n) {
        settle(i)
        size += 8 + keyLength(i) + stateLength(i)
        i += 1
      }
      val out = ByteBuffer.allocate(size)
      i = 0
      while (i < n) {
        out.putInt(keyLength(i)).put(keyBytes(i), keyAt(i), keyLength(i))
        out.putInt(stateLength(i)).put(stateBytes(i), stateAt(i), stateLength(i))
        i += 1
      }
      out.array()
    }
  }

  /** The keys a bucket entry's value holds, as (key bytes, state bytes): for readers of a
    * checkpoint. `index` names the bucket in errors.
    */
  def keysOf(bytes: Array[Byte], index: Int): Iterator[(Array[Byte], Array[Byte])] = {
    val b = Bucket.read(bytes, index)
    Iterator.range(0, b.size).map(i => (b.key(i), b.value(i)))
  }

  /** The bucket an entry's key names, or -1 when it names none. */
  def indexOf(entryKey: Array[Byte]): Int =
    if (entryKey.length == 5 && entryKey(0) == BucketTag) ByteBuffer.wrap(entryKey, 1, 4).getInt() else -1

  private object Bucket {
    def read(bytes: Array[Byte], index: Int): Bucket =
      if (bytes == null) new Bucket(stored = false)
      else {
        val b = new Bucket(stored = true)
        val in = ByteBuffer.wrap(bytes)
        def corrupt(why: String) =
          new sparkwin.core.CorruptStateException(s"key bucket $index", why, in.position(), bytes.length)
        try {
          while (in.hasRemaining) {
            val keyLength = length(in, corrupt)
            val keyAt = in.position()
            in.position(keyAt + keyLength)
            val stateLength = length(in, corrupt)
            val stateAt = in.position()
            in.position(stateAt + stateLength)
            b.add(bytes, keyAt, keyLength, bytes, stateAt, stateLength, 0) // a new bucket keeps no hashes
          }
        } catch {
          case _: java.nio.BufferUnderflowException => throw corrupt("it ends early")
        }
        b
      }

    private def length(in: ByteBuffer, corrupt: String => IllegalStateException): Int = {
      val n = in.getInt()
      if (n < 0 || n > in.remaining) throw corrupt(s"a length of $n with ${in.remaining} bytes left")
      n
    }
  }
}
