from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="Write your count as a whole number (or a formula that makes one) in multi_params, and PyTorch's count in multi_count.")
def test_multi_params_is_number(multi_params, multi_count):
    from course.handles import student
    assert type(student(multi_params)) is int, 'multi_params should be a whole number (your count)'
    assert type(student(multi_count)) is int, 'multi_count should be a whole number: sum(p.numel() for p in multi.parameters())'

