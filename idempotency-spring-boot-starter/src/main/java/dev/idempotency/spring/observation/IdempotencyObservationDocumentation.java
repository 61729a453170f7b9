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

package dev.idempotency.spring.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * Documentation of the observations of idempotent calls: {@link #IDEMPOTENT_REQUEST},
 * which the idempotency filter makes of each request to an idempotent endpoint that
 * carries (or needs) a key, and {@link #IDEMPOTENT_CALL}, which
 * {@code IdempotencyTemplate} makes of each call, and so of each call of an
 * {@code @Idempotent} bean method and each record handed to an idempotent Kafka listener.
 * <p>
 * The observation starts once the filter knows the request is subject to the contract and
 * stops when the request's idempotent handling ends: after the replay or the problem is
 * written, or, for an executed request, after its response is stored (or released) and
 * written, including asynchronous handlers and error dispatches. It is a child of the
 * current observation (the HTTP server observation, when Spring's
 * {@code ServerHttpObservationFilter} runs before the filter), and it is current while
 * the handler runs, so the handler's own observations are its children.
 * <p>
 * It is the one instrumentation of requests: with a meter observation handler (Spring
 * Boot registers Micrometer's {@code DefaultMeterObservationHandler} with its metrics) it
 * becomes the {@code idempotency.request} timer, tagged with the low-cardinality keys
 * below and the handler's {@code error}, and the {@code idempotency.request.active} long
 * task timer of the requests in flight; with a tracing bridge it becomes a span.
 * <p>
 * A call's observation starts when the template is called and stops when the call returns
 * or throws; it is current while the operation runs. It becomes the
 * {@code idempotency.call} timer and span. Refusals ({@code in_progress},
 * {@code mismatch}, {@code store_unavailable}, {@code missing_key}, {@code invalid_key})
 * throw, but are outcomes, not errors: only what the operation itself throws (or a replay
 * of a stored exception) is the observation's error.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum IdempotencyObservationDocumentation implements ObservationDocumentation {

	/**
	 * A request to an idempotent endpoint.
	 */
	IDEMPOTENT_REQUEST {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultIdempotencyObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { LowCardinalityKeyNames.OUTCOME, LowCardinalityKeyNames.POLICY,
					LowCardinalityKeyNames.REPLAYED, LowCardinalityKeyNames.COMPLETION };
		}

	},

	/**
	 * A call of an {@code @Idempotent} bean method, of {@code IdempotencyTemplate}, or a
	 * record handed to an idempotent Kafka listener: the
	 * {@value DefaultIdempotencyObservationConvention#CALL_NAME} observation, with the
	 * same keys and values as a request (where they apply) and {@code entry.point}.
	 */
	IDEMPOTENT_CALL {

		@Override
		public String getName() {
			return DefaultIdempotencyObservationConvention.CALL_NAME;
		}

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultIdempotencyObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

	};

	/**
	 * Low-cardinality keys of the observation. There are no high-cardinality keys.
	 */
	public enum LowCardinalityKeyNames implements KeyName {

		/**
		 * How the request was answered: one of the values of {@link IdempotencyOutcome},
		 * or {@code unknown} if the filter failed before deciding.
		 */
		OUTCOME {

			@Override
			public String asString() {
				return "outcome";
			}

		},

		/**
		 * Name of the endpoint's policy.
		 */
		POLICY {

			@Override
			public String asString() {
				return "policy";
			}

		},

		/**
		 * Whether a stored response answered the request: {@code true} or {@code false}.
		 */
		REPLAYED {

			@Override
			public String asString() {
				return "replayed";
			}

		},

		/**
		 * How the execution of an executed request ended: {@code stored},
		 * {@code released}, {@code fenced} (another request took the key over and this
		 * response was not stored) or {@code failed} (the store could not be written);
		 * {@code none} for requests that were not executed.
		 */
		COMPLETION {

			@Override
			public String asString() {
				return "completion";
			}

		},

		/**
		 * Where a call that is not an HTTP request came in: {@code method} (an
		 * {@code @Idempotent} bean method), {@code kafka} (an idempotent Kafka listener)
		 * or {@code template} ({@code IdempotencyTemplate} called by hand). Only on the
		 * {@code idempotency.call} observation.
		 */
		ENTRY_POINT {

			@Override
			public String asString() {
				return "entry.point";
			}

		}

	}

}
