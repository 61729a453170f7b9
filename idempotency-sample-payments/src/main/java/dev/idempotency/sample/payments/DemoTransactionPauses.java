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

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.web.IdempotencyFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpMethod;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.ModelAndView;

/**
 * Pauses the opening of an account, {@code POST /accounts}, or the settlement of a
 * gateway event, {@code POST /webhooks/gateway}, at the three points of its request
 * transaction (their policies are transactional) that the crash tests kill the process
 * at, each for as long as a demo header asks (at most a minute):
 * <ul>
 * <li>{@code Demo-Pause-Before-Handler-Ms}: the key is claimed in the open transaction,
 * the account is not written yet;
 * <li>{@code Demo-Pause-Before-Commit-Ms}: the account (or settlement) is written, the
 * transaction is not committed yet;
 * <li>{@code Demo-Pause-After-Commit-Ms}: the account (or settlement) and the stored
 * response are committed, the response is not written yet (a transaction synchronization,
 * which runs after the commit and before the idempotency filter writes the response;
 * Redis, in tiered mode, is not completed yet either).
 * </ul>
 * Each pause is logged as it begins. A malformed header is refused with a 400, before the
 * handler runs.
 *
 * @author Idempotency contributors
 * @see DemoConfiguration
 */
class DemoTransactionPauses implements HandlerInterceptor {

	static final String BEFORE_HANDLER = "Demo-Pause-Before-Handler-Ms";

	static final String BEFORE_COMMIT = "Demo-Pause-Before-Commit-Ms";

	static final String AFTER_COMMIT = "Demo-Pause-After-Commit-Ms";

	private static final String BEFORE_COMMIT_ATTRIBUTE = DemoTransactionPauses.class.getName() + ".BEFORE_COMMIT";

	private static final Log logger = LogFactory.getLog(DemoTransactionPauses.class);

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
		if (!HttpMethod.POST.matches(request.getMethod())) {
			return true;
		}
		Duration beforeHandler = DemoHeadersInterceptor.delay(header(request, BEFORE_HANDLER));
		Duration beforeCommit = DemoHeadersInterceptor.delay(header(request, BEFORE_COMMIT));
		Duration afterCommit = DemoHeadersInterceptor.delay(header(request, AFTER_COMMIT));
		request.setAttribute(BEFORE_COMMIT_ATTRIBUTE, beforeCommit);
		if (!afterCommit.isZero() && TransactionSynchronizationManager.isSynchronizationActive()) {
			String key = key(request);
			String path = request.getRequestURI();
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					pause(afterCommit, "after the commit", path, key);
				}

			});
		}
		pause(beforeHandler, "before the handler", request.getRequestURI(), key(request));
		return true;
	}

	@Override
	public void postHandle(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable ModelAndView modelAndView) {
		if (request.getAttribute(BEFORE_COMMIT_ATTRIBUTE) instanceof Duration beforeCommit) {
			pause(beforeCommit, "before the commit", request.getRequestURI(), key(request));
		}
	}

	private static @Nullable Long header(HttpServletRequest request, String name) {
		return DemoHeadersInterceptor.header(request, name, Long.class);
	}

	private static String key(HttpServletRequest request) {
		return (request.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE) instanceof IdempotencyKey key) ? key.key()
				: "none";
	}

	private static void pause(Duration pause, String point, String path, String key) {
		if (pause.isZero()) {
			return;
		}
		logger.info("Demo pause of " + pause.toMillis() + " ms " + point + " of POST " + path + ", key '" + key + "'");
		try {
			Thread.sleep(pause.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
