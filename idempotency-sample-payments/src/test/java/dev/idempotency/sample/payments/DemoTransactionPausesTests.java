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

package dev.idempotency.sample.payments;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.TypeMismatchException;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link DemoTransactionPauses}.
 *
 * @author Idempotency contributors
 */
class DemoTransactionPausesTests {

	private static final Duration PAUSE = Duration.ofMillis(200);

	private final DemoTransactionPauses pauses = new DemoTransactionPauses();

	@Test
	void pauseBeforeTheHandlerHoldsPreHandle() {
		MockHttpServletRequest request = opening();
		request.addHeader(DemoTransactionPauses.BEFORE_HANDLER, PAUSE.toMillis());
		assertThat(timed(() -> preHandle(request))).isGreaterThanOrEqualTo(PAUSE);
	}

	@Test
	void pauseBeforeTheCommitHoldsPostHandle() {
		MockHttpServletRequest request = opening();
		request.addHeader(DemoTransactionPauses.BEFORE_COMMIT, PAUSE.toMillis());
		preHandle(request);
		assertThat(timed(() -> this.pauses.postHandle(request, new MockHttpServletResponse(), new Object(), null)))
			.isGreaterThanOrEqualTo(PAUSE);
	}

	@Test
	void pauseAfterTheCommitIsASynchronizationOfTheTransaction() {
		MockHttpServletRequest request = opening();
		request.addHeader(DemoTransactionPauses.AFTER_COMMIT, PAUSE.toMillis());
		TransactionSynchronizationManager.initSynchronization();
		try {
			preHandle(request);
			List<TransactionSynchronization> synchronizations = TransactionSynchronizationManager.getSynchronizations();
			assertThat(synchronizations).hasSize(1);
			assertThat(timed(() -> synchronizations.get(0).afterCommit())).isGreaterThanOrEqualTo(PAUSE);
		}
		finally {
			TransactionSynchronizationManager.clearSynchronization();
		}
	}

	@Test
	void pauseAfterTheCommitWithoutATransactionDoesNothing() {
		MockHttpServletRequest request = opening();
		request.addHeader(DemoTransactionPauses.AFTER_COMMIT, "60000");
		assertThat(timed(() -> preHandle(request))).isLessThan(Duration.ofSeconds(30));
		assertThat(TransactionSynchronizationManager.isSynchronizationActive()).isFalse();
	}

	@Test
	void malformedHeaderIsATypeMismatchNamedAfterTheHeader() {
		MockHttpServletRequest request = opening();
		request.addHeader(DemoTransactionPauses.BEFORE_COMMIT, "soon");
		assertThatExceptionOfType(TypeMismatchException.class).isThrownBy(() -> preHandle(request))
			.satisfies((ex) -> assertThat(ex.getPropertyName()).isEqualTo(DemoTransactionPauses.BEFORE_COMMIT));
	}

	@Test
	void requestsOtherThanPostAreLeftAlone() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/accounts");
		request.addHeader(DemoTransactionPauses.BEFORE_HANDLER, "soon");
		preHandle(request);
	}

	private void preHandle(MockHttpServletRequest request) {
		assertThat(this.pauses.preHandle(request, new MockHttpServletResponse(), new Object())).isTrue();
	}

	private static Duration timed(Runnable action) {
		long start = System.nanoTime();
		action.run();
		return Duration.ofNanos(System.nanoTime() - start);
	}

	private static MockHttpServletRequest opening() {
		return new MockHttpServletRequest("POST", "/accounts");
	}

}
