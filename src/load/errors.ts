/** File system errors as people say them. */

/** A filesystem error as people say it, with its code for searching: `permission denied (EACCES)`. */
export function fsReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const said: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EISDIR: 'is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ELOOP: 'too many levels of symbolic links (a symlink loop)',
    EMFILE: 'too many open files',
    ENFILE: 'too many open files in the system',
    EIO: 'input/output error',
    ENAMETOOLONG: 'file name too long',
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
    EROFS: 'read-only file system',
    EEXIST: 'it already exists',
    EPIPE: 'the reader went away (broken pipe)',
    EBADF: 'not open (a closed descriptor)',
    ENXIO: 'no such device or address',
    ENODEV: 'no such device',
    EINVAL: 'invalid argument',
    ETXTBSY: 'text file busy',
    ECONNRESET: 'the connection was reset',
  };
  return err?.code ? `${said[err.code] ?? err.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '')} (${err.code})` : String((e as Error)?.message ?? e);
}
