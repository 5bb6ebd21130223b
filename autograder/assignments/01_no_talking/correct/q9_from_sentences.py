# question: q9
# replaces: word_frequencies, frequency_entropy, no_talking_loss
# why: the frequencies added up from the two sentences and their probabilities, the entropy in a loop
sentences = [("the cat is alive", 0.8), ("the box is empty", 0.2)]
word_frequencies = {}
for sentence, probability in sentences:
    words = sentence.split()
    for word in words:
        word_frequencies[word] = word_frequencies.get(word, 0.0) + probability / len(words)

frequency_entropy = 0.0
for p in word_frequencies.values():
    frequency_entropy -= p * math.log(p)

positions = 4
no_talking_loss = positions * frequency_entropy
print("entropy", frequency_entropy, " loss", no_talking_loss)
