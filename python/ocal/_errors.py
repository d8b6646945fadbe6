"""The exception tree: one OcalError base, each class also deriving from the built-in
exception a Python programmer would catch (a shape mismatch is a ValueError, ...)."""


class OcalError(Exception):
    """A failed ocal call. `status` is the C status code, `status_name` its name, and the
    message is ocal_last_error(): which call failed, why, and how to fix it."""

    status = None
    status_name = None


class InvalidArgumentError(OcalError, ValueError):
    pass


class ContextMismatchError(InvalidArgumentError, BufferError):
    """Memory of another OpenCL context offered where ocal's context is needed (a DLPack
    tensor): a BufferError too, as DLPack consumers raise."""


class InvalidHandleError(OcalError, ValueError):
    pass


class ShapeMismatchError(OcalError, ValueError):
    pass


class TypeMismatchError(OcalError, TypeError):
    pass


class SizeOverflowError(OcalError, OverflowError):
    pass


class NoDeviceError(OcalError, RuntimeError):
    pass


class DeviceNotFoundError(OcalError, LookupError):
    pass


class UnsupportedError(OcalError, NotImplementedError):
    pass


class OutOfHostMemoryError(OcalError, MemoryError):
    pass


class OutOfDeviceMemoryError(OcalError, MemoryError):
    pass


class BuildError(OcalError, RuntimeError):
    pass


class OpenCLError(OcalError, RuntimeError):
    pass


class FileError(OcalError, OSError):
    pass


class InternalError(OcalError, RuntimeError):
    pass


class NotConvergedError(OcalError, ArithmeticError):
    pass


# Indexed by the C status code (OCAL_STATUS_MAP's order).
BY_STATUS = {
    1: InvalidArgumentError, 2: InvalidHandleError, 3: ShapeMismatchError,
    4: TypeMismatchError, 5: SizeOverflowError, 6: NoDeviceError, 7: DeviceNotFoundError,
    8: UnsupportedError, 9: OutOfHostMemoryError, 10: OutOfDeviceMemoryError,
    11: BuildError, 12: OpenCLError, 13: FileError, 14: InternalError, 15: NotConvergedError,
}
