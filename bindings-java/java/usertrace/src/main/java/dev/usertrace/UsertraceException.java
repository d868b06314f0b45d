package dev.usertrace;

/** A failure of usertrace or of the kernel, with its stable {@link ErrorKind}. */
public class UsertraceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;

    public UsertraceException(ErrorKind kind, String message) {
        this(kind, message, null);
    }

    public UsertraceException(ErrorKind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /** Thrown by the native library, which knows only the code. */
    UsertraceException(int code, String message) {
        this(ErrorKind.of(code), message);
    }

    public ErrorKind kind() {
        return kind;
    }

    /** The stable code of {@link #kind()}. */
    public int code() {
        return kind.code();
    }
}
