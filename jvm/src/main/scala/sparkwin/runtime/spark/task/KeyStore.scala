package sparkwin.runtime.spark.task

/** Where a key group's keys keep their engine state during one call of its loop, whichever way
  * the group lies: each key an entry of its own (Spark 3.5's one value per group, or a group
  * written so), keys in buckets of entries ([[KeyBuckets]]), or, where the loop holds its writes
  * ([[WriteBehind]]), keys in buckets as the objects their state was saved as, encoded when the
  * bucket is written ([[KeyBuckets.putState]]), the buckets kept decoded from call to call
  * ([[KeptBuckets]]).
  */
sealed abstract class KeyStore {

  /** A key's stored state (bytes, or the object a held write left), or null. */
  def load(key: Array[Byte]): AnyRef

  /** Stores what `backend` holds for its current key under `key` (removes it when empty). */
  def save(key: Array[Byte], backend: SparkKeyBackend): Unit

  /** Writes what the call changed; the bucket count the group's record says (0: a key an entry). */
  def flush(): Int
}

object KeyStore {

  /** The store of a group whose record says `buckets` (0: a key an entry) and `liveKeys`;
    * `kept`: the task's kept buckets where the loop holds its writes, else null. A group keeps
    * the layout it was written with; one with nothing stored starts in buckets (so a checkpoint
    * of an older sparkwin moves over a group at a time, as groups empty). Only a host that packs
    * keys has buckets.
    */
  def of(host: GroupHost, buckets: Int, liveKeys: Long, kept: KeptBuckets): KeyStore =
    if (!host.packsKeys || buckets <= 0) new Entries(host)
    else if (kept != null) new Objects(kept.open(host, buckets, liveKeys), kept)
    else new Buckets(new KeyBuckets(host, buckets, liveKeys))

  private final class Entries(host: GroupHost) extends KeyStore {
    def load(key: Array[Byte]): AnyRef = host.get(key)
    def save(key: Array[Byte], backend: SparkKeyBackend): Unit =
      backend.save(bytes => host.put(key, bytes), () => host.remove(key))
    def flush(): Int = 0
  }

  private final class Buckets(buckets: KeyBuckets) extends KeyStore {
    def load(key: Array[Byte]): AnyRef = buckets.get(key)
    def save(key: Array[Byte], backend: SparkKeyBackend): Unit =
      backend.save(bytes => buckets.put(key, bytes), () => buckets.remove(key))
    def flush(): Int = { buckets.flush(); buckets.count }
  }

  private final class Objects(buckets: KeyBuckets, kept: KeptBuckets) extends KeyStore {
    def load(key: Array[Byte]): AnyRef = buckets.getState(key)
    def save(key: Array[Byte], backend: SparkKeyBackend): Unit =
      backend.saveState(state => buckets.putState(key, state), () => buckets.remove(key))
    def flush(): Int = { buckets.flush(); kept.closed(buckets); buckets.count }
  }
}
