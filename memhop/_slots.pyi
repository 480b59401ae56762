REQUIRED: object

def install(
    cls: type,
    names: tuple[str, ...],
    positional: int,
    defaults: tuple[object, ...],
    guard: object,
    /,
) -> None: ...
