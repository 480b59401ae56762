class Filler:
    def __new__(cls, owner: type, names: tuple[str, ...], /) -> Filler: ...
    def __call__(self, obj: object, /, *values: object) -> None: ...

REQUIRED: object

def install(
    cls: type,
    filler: Filler | None,
    names: tuple[str, ...],
    positional: int,
    defaults: tuple[object, ...],
    guard: object,
    /,
) -> None: ...
