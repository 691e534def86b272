import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the output folder cannot be used or completed: the folder, the entry and the problem.
/// `simulate` exits 74 on it.
public struct OutputFolderError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var problem: String

    public var description: String { "output folder \(path): \(problem)" }
}

/// A run's output folder. A run claims it (a lock file, so a second run on the same folder fails
/// at once), writes into a staging folder inside it, and commits: the earlier run's outputs are
/// removed and the new ones renamed into place, `report.json` last, so a killed run leaves one
/// run's files, never a mix of two. The simulator deletes only what it created: the outputs named
/// in the manifest of the earlier run, and staging folders that carry its marker file.
public final class OutputFolder {
    /// The folder the outputs end up in.
    public let path: String
    /// Where this run writes; renamed into `path` by `commit()`.
    public let stagingPath: String
    private let lockDescriptor: Int32

    static let lockName = ".simulate.lock"
    /// The names of the files the last completed run wrote, one a line.
    static let manifestName = ".simulate-outputs"
    static let stagingPrefix = ".staging-"
    static let stagingMarkerName = ".simulate-staging"

    /// Every name a run may write into the folder. A folder entry with one of these names that
    /// the simulator did not write is refused, never replaced.
    public static let outputNames = [
        "population.json", "events.jsonl", "store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "report.html",
        "report.json",
    ]

    private init(path: String, stagingPath: String, lockDescriptor: Int32) {
        self.path = path
        self.stagingPath = stagingPath
        self.lockDescriptor = lockDescriptor
    }

    deinit { close(lockDescriptor) }

    /// Creates the folder when missing, takes its lock, removes the staging folders of killed
    /// earlier runs, checks that nothing the run will write is in the way, and makes a fresh
    /// staging folder. Throws when another run holds the lock, or an entry with an output's name
    /// is a folder or a file the simulator did not write.
    public static func claim(_ path: String) throws(OutputFolderError) -> OutputFolder {
        let files = FileManager.default
        func fail(_ problem: String) -> OutputFolderError { OutputFolderError(path: path, problem: problem) }
        var isFolder: ObjCBool = false
        if files.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
            throw fail("is a file, not a folder")
        }
        // mkdir one level at a time, so the message names the level that failed and why.
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw fail("cannot be created: \(prefix): \(errnoText())")
            }
        }
        let descriptor = open(path + "/" + lockName, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw fail("cannot create its lock file \(lockName) (\(errnoText()))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            close(descriptor)
            throw fail(
                busy
                    ? "another simulate run is using it (it holds \(lockName)); wait for it or choose another --out"
                    : "cannot lock \(lockName) (\(errnoText()))")
        }
        do {
            try removeAbandonedStaging(in: path)
            try checkNothingInTheWay(in: path)
            let staging = path + "/" + stagingPrefix + String(getpid())
            try files.createDirectory(atPath: staging, withIntermediateDirectories: false)
            try Data().write(to: URL(fileURLWithPath: staging + "/" + stagingMarkerName))
            return OutputFolder(path: path, stagingPath: staging, lockDescriptor: descriptor)
        } catch let error as OutputFolderError {
            close(descriptor)
            throw error
        } catch {
            close(descriptor)
            throw fail("cannot prepare a staging folder (\(reason(error)))")
        }
    }

    /// Moves the staged outputs into place and removes the staging folder. The manifest names
    /// both runs' files while they change places, so an interrupted commit leaves nothing that a
    /// later run would refuse as not its own.
    public func commit() throws(OutputFolderError) {
        let files = FileManager.default
        do {
            let staged = try files.contentsOfDirectory(atPath: stagingPath)
                .filter { $0 != Self.stagingMarkerName }
                .sorted { ($0 == "report.json" ? 1 : 0, $0) < ($1 == "report.json" ? 1 : 0, $1) }
            for name in staged where !Self.outputNames.contains(name) {
                throw OutputFolderError(path: path, problem: "the run wrote \"\(name)\", which is not a known output")
            }
            let earlier = Self.manifest(in: path)
            try Self.writeManifest(Set(earlier).union(staged).sorted(), in: path)
            for name in earlier where Self.isRegularFile(path + "/" + name) {
                try files.removeItem(atPath: path + "/" + name)
            }
            try Self.checkNothingInTheWay(in: path)
            for name in staged where rename(stagingPath + "/" + name, path + "/" + name) != 0 {
                throw OutputFolderError(path: path, problem: "cannot move \(name) into place (\(Self.errnoText()))")
            }
            try Self.writeManifest(staged, in: path)
            try files.removeItem(atPath: stagingPath)
        } catch let error as OutputFolderError {
            throw error
        } catch {
            throw OutputFolderError(
                path: path, problem: "the outputs cannot be moved into place (\(Self.reason(error)))")
        }
    }

    /// Removes the staging folder after a failed run; the earlier run's outputs stay as they were.
    public func abandon() {
        try? FileManager.default.removeItem(atPath: stagingPath)
    }

    /// A scenario name as a folder name: letters, digits, `.`, `_` and `-` are kept, anything else
    /// (a `/` above all) becomes `_`, and leading dots are dropped, so `../x` cannot leave the
    /// parent folder.
    public static func folderName(forScenario name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        var safe = String(name.map { allowed.contains($0) ? $0 : "_" })
        while safe.hasPrefix(".") { safe.removeFirst() }
        return safe.isEmpty ? "scenario" : String(safe.prefix(100))
    }

    // MARK: - Helpers

    static func manifest(in path: String) -> [String] {
        guard let text = try? String(contentsOfFile: path + "/" + manifestName, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init).filter { outputNames.contains($0) }
    }

    static func writeManifest(_ names: [String], in path: String) throws {
        let temporary = path + "/" + manifestName + ".new"
        try Data(names.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path + "/" + manifestName) == 0 else {
            throw OutputFolderError(path: path, problem: "cannot write \(manifestName) (\(errnoText()))")
        }
    }

    /// Every output name is absent, or a regular file the manifest says the simulator wrote.
    static func checkNothingInTheWay(in path: String) throws(OutputFolderError) {
        let written = Set(manifest(in: path))
        for name in outputNames {
            let entry = path + "/" + name
            var status = stat()
            guard lstat(entry, &status) == 0 else { continue }
            let kind = status.st_mode & S_IFMT
            if kind != S_IFREG {
                let what = kind == S_IFDIR ? "a folder" : kind == S_IFLNK ? "a symbolic link" : "not a regular file"
                throw OutputFolderError(
                    path: path,
                    problem: "\"\(name)\" is \(what); the simulator writes a file of that name and deletes nothing "
                        + "it did not create: move it away or choose another --out")
            }
            if !written.contains(name) {
                throw OutputFolderError(
                    path: path,
                    problem: "\"\(name)\" was not written by simulate (it is not in \(manifestName)); the simulator "
                        + "deletes nothing it did not create: move it away or choose another --out")
            }
        }
    }

    /// Staging folders of runs that were killed; only those with the simulator's marker inside.
    static func removeAbandonedStaging(in path: String) throws {
        let files = FileManager.default
        for name in try files.contentsOfDirectory(atPath: path) where name.hasPrefix(stagingPrefix) {
            let folder = path + "/" + name
            if isRegularFile(folder + "/" + stagingMarkerName) { try files.removeItem(atPath: folder) }
        }
    }

    static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }

    /// An error's reason without Foundation's dump of its user info.
    public static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain || nsError.domain == NSPOSIXErrorDomain else {
            return String(describing: error)
        }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        let file = (nsError.userInfo[NSFilePathErrorKey] as? String).map { ": \($0)" } ?? ""
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or folder" + file
        case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied" + file
        case .fileWriteOutOfSpace: return "no space left on the device" + file
        case .fileWriteFileExists: return "already exists" + file
        case .fileWriteVolumeReadOnly: return "read-only file system" + file
        default: return "file system error \(nsError.code)" + file
        }
    }
}
