/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */


package dev.idempotency.core.jmh;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Operations of {@link InMemoryIdempotencyStore} that do not add records, with 1,000, 100,000
 * and 1,000,000 completed records already stored: the replay of a hot key (an
 * {@code acquire} that finds a completed record), the same replay while the store sweeps
 * (its sweep interval is zero, so every call takes a sweep step of at most
 * {@value InMemoryIdempotencyStore#SWEEP_STEP} records: the most a sweep adds to one
 * operation), and a whole pass of the sweep ({@code purgeExpired}). Nothing has expired, so
 * the sweep only walks the records.
 * <p>
 * Acquisitions of new keys grow the store, so they are measured in batches by
 * {@link InMemoryStoreFreshKeyBenchmark}.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms2g", "-Xmx2g" })
@State(Scope.Benchmark)
public class InMemoryStoreBenchmark {

	@Param({ "1000", "100000", "1000000" })
	int records;

	private InMemoryIdempotencyStore store;

	private InMemoryIdempotencyStore sweepingStore;

	private IdempotencyKey hotKey;

	private RequestFingerprint hotFingerprint;

	private OwnerToken token;

	private Duration lease;

	private Duration ttl;

	@Setup
	public void setUp() {
		this.lease = Duration.ofSeconds(30);
		this.ttl = Duration.ofHours(24);
		this.store = BenchmarkData.prefilledStore(this.records, this.ttl);
		this.hotKey = BenchmarkData.keys("hot", 1)[0];
		this.hotFingerprint = BenchmarkData.fingerprint(-1L);
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.hotKey, this.hotFingerprint, owner, this.lease, this.ttl);
		this.store.complete(this.hotKey, owner, BenchmarkData.response(1024), this.ttl);
		this.token = OwnerToken.generate();
		if (!(replayHotKey() instanceof AcquireResult.Replay)) {
			throw new IllegalStateException("Hot key is not replayed");
		}
		this.sweepingStore = BenchmarkData.prefilledStore(this.records, this.ttl);
		this.sweepingStore.acquire(this.hotKey, this.hotFingerprint, owner, this.lease, this.ttl);
		this.sweepingStore.complete(this.hotKey, owner, BenchmarkData.response(1024), this.ttl);
		this.sweepingStore.setSweepInterval(Duration.ZERO);
		if (!(replayHotKeyWhileSweeping() instanceof AcquireResult.Replay)) {
			throw new IllegalStateException("Hot key is not replayed while sweeping");
		}
	}

	@Benchmark
	public AcquireResult replayHotKey() {
		return this.store.acquire(this.hotKey, this.hotFingerprint, this.token, this.lease, this.ttl);
	}

	@Benchmark
	public AcquireResult replayHotKeyWhileSweeping() {
		return this.sweepingStore.acquire(this.hotKey, this.hotFingerprint, this.token, this.lease, this.ttl);
	}

	@Benchmark
	@OutputTimeUnit(TimeUnit.MICROSECONDS)
	public int sweep() {
		return this.store.purgeExpired();
	}

}
