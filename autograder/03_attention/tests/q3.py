from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="hot_factor and cold_factor should be numbers, one of 1, 10 and 0.1.")
def test_factors_are_numbers(hot_factor, cold_factor):
    for f in (hot_factor, cold_factor):
        assert isinstance(f, (int, float)) and min((abs(f - c) for c in (1, 10, 0.1))) < 1e-09

@test_case(points=1, hidden=True, 
    failure_message="Not quite. Multiplying q by c multiplies every energy by c, i.e. divides the temperature by c. Large c means low temperature (cold, frozen onto one site); small c means high temperature (hot, nearly uniform).")
def test_hot_and_cold(hot_factor, cold_factor):
    assert abs(hot_factor - 0.1) < 1e-09 and abs(cold_factor - 10) < 1e-09

