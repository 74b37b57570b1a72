package sparkwin.runtime.spark.localfs

import java.io.FileNotFoundException
import java.net.URI
import java.nio.file.{Files, NoSuchFileException}
import java.nio.file.attribute.PosixFilePermission

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFs, DelegateToFileSystem, FileStatus, FsServerDefaults, Path}
import org.apache.hadoop.fs.RawLocalFileSystem
import org.apache.hadoop.fs.local.LocalConfigKeys
import org.apache.hadoop.fs.permission.FsPermission

/** Hadoop's local file system, less its forked processes. Without Hadoop's native library (pip's
  * PySpark has none) Hadoop asks a new `readlink` process whether each path of a `FileContext`
  * rename is a link, and a `chmod` process to set each new file's permission: every state store
  * commit and every offset and commit log entry of a local checkpoint forked 5-9 of them, and at
  * 100k events a micro-batch they were most of a batch's commit time (docs/benchmarks.md). These
  * ask Java instead; a symbolic link, a mode Java cannot set, or a file system without POSIX
  * permissions still goes Hadoop's way. `sparkwin.session()` names them for `file:` paths on a
  * local master (`LocalFileSystems.Settings`).
  */
class ForklessRawLocalFileSystem extends RawLocalFileSystem {

  /** A path that is no link has the status of its target, which Hadoop reads without a process. */
  override def getFileLinkStatus(f: Path): FileStatus =
    if (Files.isSymbolicLink(pathToFile(f).toPath)) super.getFileLinkStatus(f)
    else getFileStatus(f)

  override def setPermission(p: Path, permission: FsPermission): Unit =
    LocalFileSystems.posix(permission) match {
      case Some(perms) =>
        val file = pathToFile(p).toPath
        try Files.setPosixFilePermissions(file, perms)
        catch {
          case _: NoSuchFileException => throw new FileNotFoundException(s"File $p does not exist")
          case _: UnsupportedOperationException => super.setPermission(p, permission)
        }
      case None => super.setPermission(p, permission)
    }
}

/** The raw forkless local file system for `FileContext`, as Hadoop's `RawLocalFs` is for its own. */
class ForklessRawLocalFs(uri: URI, conf: Configuration)
    extends DelegateToFileSystem(uri, new ForklessRawLocalFileSystem, conf, "file", false) {
  override def getUriDefaultPort: Int = -1
  override def getServerDefaults(): FsServerDefaults = LocalConfigKeys.getServerDefaults()
  override def supportsSymlinks(): Boolean = true
  // Local names are the operating system's to judge, as in Hadoop's own local file systems.
  override def isValidName(src: String): Boolean = true
}

/** `fs.AbstractFileSystem.file.impl`: what `FileContext` (Spark's checkpoint files) writes through. */
class ForklessLocalFs(uri: URI, conf: Configuration) extends ChecksumFs(new ForklessRawLocalFs(uri, conf))

object LocalFileSystems {

  /** The Hadoop setting that puts them under `FileContext`'s `file:` paths, through which Spark
    * writes every checkpoint file. Not `fs.file.impl`: `spark-submit` builds that file system
    * to find the jars it is given, before this jar is on its classpath.
    */
  val Settings: Map[String, String] = Map(
    "fs.AbstractFileSystem.file.impl" -> classOf[ForklessLocalFs].getName
  )

  private val Bits: Seq[(Int, PosixFilePermission)] = {
    import PosixFilePermission._
    Seq(
      0x100 -> OWNER_READ,
      0x80 -> OWNER_WRITE,
      0x40 -> OWNER_EXECUTE,
      0x20 -> GROUP_READ,
      0x10 -> GROUP_WRITE,
      0x8 -> GROUP_EXECUTE,
      0x4 -> OTHERS_READ,
      0x2 -> OTHERS_WRITE,
      0x1 -> OTHERS_EXECUTE
    )
  }

  /** A mode as Java's permission set; None when it has bits Java cannot set (sticky, setuid). */
  def posix(permission: FsPermission): Option[java.util.Set[PosixFilePermission]] = {
    val mode = permission.toShort & 0xffff
    if ((mode & ~0x1ff) != 0) None
    else {
      val perms = java.util.EnumSet.noneOf(classOf[PosixFilePermission])
      Bits.foreach { case (bit, perm) => if ((mode & bit) != 0) perms.add(perm) }
      Some(perms)
    }
  }
}
