# question: q4
# replaces: hot_factor, cold_factor
# why: the factors written as floats
hot_factor = 0.1
cold_factor = 10.0
