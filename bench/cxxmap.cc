/*
 * The C++ workload: a std::map<std::string, std::vector<std::string>> index, the
 * shape of a symbol table or an inverted index in a real program. Inserts N keys
 * (default 200,000; 16..40 characters, so every key is its own heap block past the
 * small-string buffer), appends 1..8 values of 4..48 characters to each key's
 * vector (short ones stay in the string, long ones are blocks; the vector grows by
 * reallocation), looks every key up, erases a third of them and refills the rest:
 * many small blocks from libstdc++'s operator new, made through inlined templates.
 * Prints a checksum.
 *   cxxmap [-n KEYS]
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
#include <unistd.h>

static uint64_t rnd(uint64_t &s)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static std::string word(uint64_t &seed, unsigned lo, unsigned hi)
{
	uint64_t r = rnd(seed);
	std::string w(lo + r % (hi - lo + 1), 'a');

	for (char &c : w) {
		c = (char)('a' + r % 26);
		r = r * 6364136223846793005ull + 1442695040888963407ull;
	}
	return w;
}

int main(int argc, char **argv)
{
	unsigned long n = 200000;
	uint64_t seed = 0x243F6A8885A308D3ull;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n')
			return 2;
		n = strtoul(optarg, NULL, 10);
	}
	std::map<std::string, std::vector<std::string>> index;
	std::vector<std::string> keys;

	keys.reserve(n);
	for (unsigned long i = 0; i < n; i++) {
		std::string k = word(seed, 16, 40);
		std::vector<std::string> &v = index[k];
		unsigned nv = 1 + (unsigned)(rnd(seed) % 8);

		for (unsigned j = 0; j < nv; j++)
			v.push_back(word(seed, 4, 48));
		keys.push_back(std::move(k));
	}
	uint64_t sum = 0;
	for (const std::string &k : keys) {
		auto it = index.find(k);

		if (it != index.end())
			sum += it->second.size() + it->second.front().size();
	}
	for (unsigned long i = 0; i < n; i += 3)
		index.erase(keys[i]);
	for (auto &kv : index)
		kv.second.push_back(word(seed, 4, 48));
	for (auto &kv : index)
		sum += kv.second.back().size();
	printf("%zu keys, checksum %llu\n", index.size(), (unsigned long long)sum);
	return 0;
}
