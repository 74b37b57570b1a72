package sparkwin.runtime.spark.localfs

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path => JPath}
import java.nio.file.attribute.PosixFilePermissions
import java.util.EnumSet

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{CreateFlag, FileContext, FileSystem, Options, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.FsPermission

/** The forkless local file systems answer as Hadoop's own do: Spark's checkpoint writes (a file
  * created, then renamed over another), link status, permissions, checksums.
  */
class LocalFileSystemsSuite extends munit.FunSuite {
  private val dir = FunFixture[JPath](_ => Files.createTempDirectory("sparkwin-localfs"), d => deleteAll(d))

  private def deleteAll(d: JPath): Unit =
    Files
      .walk(d)
      .sorted(java.util.Comparator.reverseOrder[JPath]())
      .forEach(p => { Files.deleteIfExists(p); () })

  private def conf(): Configuration = {
    val c = new Configuration(false)
    LocalFileSystems.Settings.foreach { case (k, v) => c.set(k, v) }
    c
  }

  private def path(d: JPath, name: String) = new Path(d.resolve(name).toUri)

  private def write(fc: FileContext, p: Path, text: String): Unit = {
    val out = fc.create(p, EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE))
    try out.write(text.getBytes(UTF_8))
    finally out.close()
  }

  private def read(fs: FileSystem, p: Path): String = {
    val in = fs.open(p)
    try scala.io.Source.fromInputStream(in, "UTF-8").mkString
    finally in.close()
  }

  test("the settings name the file system Hadoop then builds for FileContext's file: paths") {
    assertEquals[Any, Any](
      FileContext.getLocalFSFileContext(conf()).getDefaultFileSystem.getClass,
      classOf[ForklessLocalFs]
    )
  }

  dir.test("a checkpoint write: a temporary file renamed over the last one, checksummed, as Spark's") { d =>
    val fc = FileContext.getLocalFSFileContext(conf())
    val target = path(d, "1")
    write(fc, target, "first")
    val temp = path(d, ".1.tmp")
    write(fc, temp, "second")
    fc.rename(temp, target, Options.Rename.OVERWRITE)
    val fs = FileSystem.newInstance(new java.net.URI("file:///"), new Configuration(false))
    assertEquals(read(fs, target), "second") // read back through the checksum, which moved with it
    assert(Files.exists(d.resolve(".1.crc")), "the checksum file is renamed with its file")
    assert(!Files.exists(d.resolve(".1.tmp")) && !Files.exists(d.resolve("..1.tmp.crc")))
    intercept[org.apache.hadoop.fs.FileAlreadyExistsException] {
      write(fc, temp, "third")
      fc.rename(temp, target)
    }
  }

  dir.test("link status: a file's equals Hadoop's own; a link is still a link; a missing path is not found") {
    d =>
      val fs = new ForklessRawLocalFileSystem
      fs.initialize(new java.net.URI("file:///"), conf())
      val hadoop = new RawLocalFileSystem
      hadoop.initialize(new java.net.URI("file:///"), new Configuration(false))
      Files.write(d.resolve("f"), "abc".getBytes(UTF_8))
      val ours = fs.getFileLinkStatus(path(d, "f"))
      val theirs = hadoop.getFileLinkStatus(path(d, "f"))
      assertEquals(
        (ours.getPath, ours.getLen, ours.isFile, ours.isSymlink),
        (theirs.getPath, 3L, true, false)
      )
      assertEquals(fs.getFileLinkStatus(new Path(d.toUri)).isDirectory, true)
      Files.createSymbolicLink(d.resolve("link"), d.resolve("f"))
      // Hadoop reads a link only by its bare name; ours answers as Hadoop's for either name.
      val bare = new Path(d.resolve("link").toString)
      assert(fs.getFileLinkStatus(bare).isSymlink)
      for (p <- Seq(bare, path(d, "link"))) {
        val (o, t) = (fs.getFileLinkStatus(p), hadoop.getFileLinkStatus(p))
        assertEquals((o.isSymlink, o.getLen), (t.isSymlink, t.getLen))
        if (t.isSymlink) assertEquals(o.getSymlink, t.getSymlink)
      }
      intercept[FileNotFoundException](fs.getFileLinkStatus(path(d, "missing")))
  }

  dir.test("permissions are set as chmod sets them; a missing file is not found") { d =>
    val fs = new ForklessRawLocalFileSystem
    fs.initialize(new java.net.URI("file:///"), conf())
    Files.write(d.resolve("f"), Array[Byte](1))
    for (mode <- Seq("rw-r-----", "rwx------", "r--r--r--", "rw-rw-rw-")) {
      fs.setPermission(path(d, "f"), FsPermission.valueOf("-" + mode))
      assertEquals(PosixFilePermissions.toString(Files.getPosixFilePermissions(d.resolve("f"))), mode)
    }
    intercept[FileNotFoundException](
      fs.setPermission(path(d, "missing"), new FsPermission(Integer.parseInt("644", 8).toShort))
    )
    // A file created through it gets the mode Hadoop asks for, less the umask.
    val out = fs.create(
      path(d, "g"),
      new FsPermission(Integer.parseInt("640", 8).toShort),
      true,
      4096,
      1.toShort,
      1L << 20,
      null
    )
    out.close()
    assertEquals(PosixFilePermissions.toString(Files.getPosixFilePermissions(d.resolve("g"))), "rw-r-----")
  }

  test("modes Java cannot set (sticky, setuid) are left to Hadoop's way") {
    assertEquals(LocalFileSystems.posix(new FsPermission(Integer.parseInt("1777", 8).toShort)), None)
    assertEquals(
      LocalFileSystems
        .posix(new FsPermission(Integer.parseInt("751", 8).toShort))
        .map(PosixFilePermissions.toString),
      Some("rwxr-x--x")
    )
  }
}
