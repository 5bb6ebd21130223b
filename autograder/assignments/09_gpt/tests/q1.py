from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2


@test_case(points=1, hidden=False, failure_message='Config(vocab_size=1024) should have context=128, dim=128, heads=4, layers=4 and dropout=0.2.')  # noqa: E501
def test_defaults(Config):


    from course.handles import student

    Config = student(Config)
    cfg = Config(vocab_size=1024)
    assert cfg.vocab_size.get() == 1024, "Config(vocab_size=1024).vocab_size should be 1024"
    got = {name: getattr(cfg, name).get() for name in ("context", "dim", "heads", "layers", "dropout")}
    want = {"context": 128, "dim": 128, "heads": 4, "layers": 4, "dropout": 0.2}
    assert got == want, f"the defaults are {got}, expected {want}"


@test_case(points=1, hidden=True, failure_message='The fields of Config should come in this order: vocab_size, context, dim, heads, layers, dropout (so that Config(50, 16, 32, 2, 3, 0.1) sets them in that order), each settable by name.')  # noqa: E501
def test_fields_in_order(Config):


    from course.handles import student

    Config = student(Config)
    names = ("vocab_size", "context", "dim", "heads", "layers", "dropout")
    cfg = Config(50, 16, 32, 2, 3, 0.1)
    got = tuple(getattr(cfg, name).get() for name in names)
    assert got == (50, 16, 32, 2, 3, 0.1), \
        f"Config(50, 16, 32, 2, 3, 0.1) gave {dict(zip(names, got, strict=False))}"
    cfg = Config(vocab_size=7, heads=2, dropout=0.0)
    got = tuple(getattr(cfg, name).get() for name in names)
    assert got == (7, 128, 128, 2, 4, 0.0), \
        f"Config(vocab_size=7, heads=2, dropout=0.0) gave {dict(zip(names, got, strict=False))}"
