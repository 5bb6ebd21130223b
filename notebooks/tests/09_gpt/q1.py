from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=1, hidden=False, 
    failure_message="Config(vocab_size=1024) should have context=128, dim=128, heads=4, layers=4 and dropout=0.2.")
def test_defaults(Config):
    from course.handles import student
    Config = student(Config)
    cfg = Config(vocab_size=1024)
    assert cfg.vocab_size.get() == 1024, 'Config(vocab_size=1024).vocab_size should be 1024'
    got = {name: getattr(cfg, name).get() for name in ('context', 'dim', 'heads', 'layers', 'dropout')}
    want = {'context': 128, 'dim': 128, 'heads': 4, 'layers': 4, 'dropout': 0.2}
    assert got == want, f'the defaults are {got}, expected {want}'

