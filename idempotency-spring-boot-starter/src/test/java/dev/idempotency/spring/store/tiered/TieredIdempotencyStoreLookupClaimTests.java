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

package dev.idempotency.spring.store.tiered;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link TieredIdempotencyStore} in {@link TieredClaimMode#LOOKUP lookup claim mode}: the
 * calls of each path, fencing by the fast tier, the fallbacks, and the failure window the
 * mode accepts.
 *
 * @author Idempotency contributors
 */
class TieredIdempotencyStoreLookupClaimTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(1);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")),
			"{\"id\":42}".getBytes(StandardCharsets.UTF_8));

	private final List<String> journal = Collections.synchronizedList(new ArrayList<>());

	private final InMemoryIdempotencyStore fastMemory = new InMemoryIdempotencyStore();

	private final InMemoryDurableTier durableMemory = new InMemoryDurableTier();

	private final FaultInjectingStore fast = new FaultInjectingStore("fast", this.fastMemory, this.journal);

	private final FaultInjectingStore durable = new FaultInjectingStore("durable", this.durableMemory, this.journal);

	private final TieredIdempotencyStore store = new TieredIdempotencyStore(this.fast, this.durable);

	private final TieredIdempotencyStoreTests.RecordingListener listener = new TieredIdempotencyStoreTests.RecordingListener();

	private final IdempotencyKey key = TieredIdempotencyStoreTests.newKey();

	private final RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(1);

	@BeforeEach
	void setUp() {
		this.store.setClaimMode(TieredClaimMode.LOOKUP);
		this.store.setListener(this.listener);
	}

	@Test
	void durableClaimIsTheDefault() {
		assertThat(new TieredIdempotencyStore(this.fast, this.durable).getClaimMode())
			.isEqualTo(TieredClaimMode.DURABLE);
	}

	@Test
	void lookupClaimModeNeedsADurableTierThatCompletesUnclaimedKeys() {
		TieredIdempotencyStore plain = new TieredIdempotencyStore(new InMemoryIdempotencyStore(),
				new InMemoryIdempotencyStore());
		assertThatIllegalArgumentException().isThrownBy(() -> plain.setClaimMode(TieredClaimMode.LOOKUP))
			.withMessageContaining("UnclaimedCompletion");
	}

	@Test
	void firstRequestReadsDurableTierOnceAndWritesItOnce() {
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		// nothing durable while the handler runs
		assertThat(this.durableMemory.find(this.key)).isEmpty();
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.journal).containsExactly("fast.acquire", "durable.find", "fast.complete",
				"durable.completeUnclaimed");
		assertThat(this.durableMemory.find(this.key)).get().satisfies((record) -> {
			assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
			assertThat(record.owner()).isEqualTo(token);
			assertThat(record.fingerprint()).isEqualTo(this.fingerprint);
			assertThat(record.response()).isEqualTo(RESPONSE);
		});
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire");
		assertThat(this.listener.fallbacks).isEmpty();
	}

	@Test
	void replayAfterFastTierLostTheRecordIsReadFromDurableTierAndRewarmsIt() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.journal).containsExactly("fast.acquire", "durable.find", "fast.complete");
		assertThat(this.fastMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
	}

	@Test
	void duplicateAfterFastTierLostARunningClaimRunsAgainAndTheFirstCompletionWins() {
		// the failure window of the lookup claim
		// mode, documented in docs/stores/tiered.md
		OwnerToken first = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, first, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(first));
		this.fastMemory.evict(this.key);
		OwnerToken duplicate = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, duplicate, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(duplicate));
		StoredResponse other = new StoredResponse(201, List.of(), "second".getBytes(StandardCharsets.UTF_8));
		assertThat(this.store.complete(this.key, duplicate, other, TTL)).isTrue();
		// the first owner's fast claim is gone, nobody holds it there: the durable tier
		// fences it, and the fast tier keeps replaying the stored response
		assertThat(this.store.complete(this.key, first, RESPONSE, TTL)).isFalse();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(other));
		this.fastMemory.evict(this.key);
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(other));
	}

	@Test
	void sameScenarioInDurableClaimModeAnswersInProgress() {
		TieredIdempotencyStore durableMode = new TieredIdempotencyStore(this.fast, this.durable);
		OwnerToken first = OwnerToken.generate();
		assertThat(durableMode.acquire(this.key, this.fingerprint, first, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(first));
		this.fastMemory.evict(this.key);
		assertThat(durableMode.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(durableMode.complete(this.key, first, RESPONSE, TTL)).isTrue();
	}

	@Test
	void completionOfAClaimLostByTheFastTierIsStillStored() {
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL);
		this.fastMemory.evict(this.key);
		this.journal.clear();
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.journal).containsExactly("fast.complete", "fast.find", "durable.completeUnclaimed");
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
	}

	@Test
	void ownerWhoseFastClaimWasTakenOverIsFencedWithoutDurableWrite() {
		OwnerToken old = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, old, LEASE, TTL);
		this.fastMemory.evict(this.key);
		OwnerToken current = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, current, LEASE, TTL);
		this.journal.clear();
		assertThat(this.store.extend(this.key, old, LEASE)).isFalse();
		assertThat(this.store.complete(this.key, old, RESPONSE, TTL)).isFalse();
		assertThat(this.journal).containsExactly("fast.extend", "fast.complete", "fast.find");
		assertThat(this.durableMemory.find(this.key)).isEmpty();
		assertThat(this.store.complete(this.key, current, RESPONSE, TTL)).isTrue();
	}

	@Test
	void releaseAndExtendUseTheFastTierOnly() {
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL);
		this.journal.clear();
		assertThat(this.store.extend(this.key, token, LEASE)).isTrue();
		assertThat(this.store.find(this.key)).get().satisfies((record) -> {
			assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING);
			assertThat(record.owner()).isEqualTo(token);
		});
		assertThat(this.store.release(this.key, token)).isTrue();
		assertThat(this.journal).containsExactly("fast.extend", "durable.find", "fast.find", "fast.release");
		assertThat(this.store.find(this.key)).isEmpty();
	}

	@Test
	void releaseAndExtendFailWhenTheFastTierCannotBeReached() {
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL);
		this.fast.setDown(true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.extend(this.key, token, LEASE));
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.release(this.key, token));
	}

	@Test
	void fastTierDownFallsBackToTheDurableClaim() {
		this.fast.setDown(true);
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.durableMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING));
		// a duplicate served by the durable tier alone sees the claim
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		this.fast.setDown(false);
		// ... and so does one served by a healthy fast tier again
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.store.extend(this.key, token, LEASE)).isTrue();
		// the fast tier is renewed in the background: let it land before the journal is
		// cleared, or a busy machine records it among the completion's calls
		TieredIdempotencyStoreTests.awaitUntil(() -> this.journal.contains("fast.extend"));
		this.journal.clear();
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		// the fast tier has no record of the claim and refuses the completion: whatever
		// it holds for the key instead is dropped, so that it cannot refuse the retries
		assertThat(this.journal).containsExactly("durable.complete", "fast.complete", "fast.evict");
	}

	@Test
	void durableLookUpFailureReleasesTheFastClaimAndFails() {
		this.durable.setFailing("find", true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	@Test
	void durableCompletionFailureKeepsTheClaimForTheRetry() {
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL);
		this.durable.setFailing("completeUnclaimed", true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.complete(this.key, token, RESPONSE, TTL));
		this.durable.setFailing("completeUnclaimed", false);
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.durableMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.response()).isEqualTo(RESPONSE));
	}

	@Test
	void completionFencedByAnotherDurableOwnerDropsTheFastReplay() {
		OwnerToken lookupOwner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, lookupOwner, LEASE, TTL);
		// meanwhile an instance that could not reach the fast tier claimed and completed
		// the key in the durable tier
		OwnerToken durableOwner = OwnerToken.generate();
		this.durableMemory.acquire(this.key, this.fingerprint, durableOwner, LEASE, TTL);
		StoredResponse other = new StoredResponse(200, List.of(), "other".getBytes(StandardCharsets.UTF_8));
		this.durableMemory.complete(this.key, durableOwner, other, TTL);
		assertThat(this.store.complete(this.key, lookupOwner, RESPONSE, TTL)).isFalse();
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(other));
	}

	@Test
	void fastMismatchIsOverruledOnlyByADurableReplay() {
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL);
		RequestFingerprint other = TieredIdempotencyStoreTests.fingerprint(2);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, other, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		// the durable tier was read, never claimed: the running claim is untouched
		assertThat(this.journal).containsExactly("fast.acquire", "durable.find");
		assertThat(this.durableMemory.find(this.key)).isEmpty();
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
	}

	@Test
	void concurrentAcquisitionsHaveExactlyOneWinnerPerKey() throws Exception {
		int threads = 16;
		List<IdempotencyKey> keys = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			keys.add(TieredIdempotencyStoreTests.newKey());
		}
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> winners = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				Callable<Integer> task = () -> {
					start.await();
					int won = 0;
					for (IdempotencyKey each : keys) {
						OwnerToken token = OwnerToken.generate();
						if (this.store.acquire(each, this.fingerprint, token, LEASE,
								TTL) instanceof AcquireResult.Acquired) {
							won++;
							assertThat(this.store.complete(each, token, RESPONSE, TTL)).isTrue();
						}
					}
					return won;
				};
				winners.add(executor.submit(task));
			}
			start.countDown();
			int total = 0;
			for (Future<Integer> winner : winners) {
				total += winner.get();
			}
			assertThat(total).isEqualTo(keys.size());
		}
		finally {
			executor.shutdownNow();
		}
	}

	private void completeFirstRequest() {
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL);
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
	}

}
