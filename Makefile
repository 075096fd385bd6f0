# The two commands of the README:
#   make run   installs what is missing, builds (Release) and runs the embedded default comparison
#   make test  installs what is missing, builds, and runs every test (Release, then unit tests under ASan+UBSan)
JOBS ?= $(shell nproc)
BUILD ?= build/release
ASAN_BUILD ?= build/asan

.PHONY: run test deps build build-asan bench clean

run: build
	./$(BUILD)/rltune simulate --cluster helios --seed 2 --blocking pool \
	  --policy fcfs,sjf,f1,rl:models/helios-fcfs-bsld-extended,rl:models/helios-fcfs-bsld-extended@milp

test: build build-asan
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRLTUNE_SANITIZE=ON -DRLTUNE_BUILD_BENCH=OFF -DRLTUNE_WITH_TORCH=OFF
	cmake --build $(ASAN_BUILD) -j$(JOBS)

bench: build
	./$(BUILD)/bench/rltune_bench

clean:
	rm -rf build
